package object_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setAlarmIn sets agent "a"'s alarm d from now, in a fresh Run.
func (w *world) setAlarmIn(d time.Duration) {
	w.t.Helper()
	w.inside(func(ctx context.Context, st *object.State) error { return st.SetAlarm(ctx, st.Now().Add(d)) })
}

func (w *world) getAlarm() (time.Time, bool) {
	w.t.Helper()
	var at time.Time
	var ok bool
	w.inside(func(ctx context.Context, st *object.State) error {
		var err error
		at, ok, err = st.GetAlarm(ctx)
		return err
	})
	return at, ok
}

// O6: an alarm is a background event: it does not keep Run from
// returning, and fires when virtual time reaches it.
func TestAlarmFiresWhenTimeReachesItO6(t *testing.T) {
	t.Run("Advance", func(t *testing.T) {
		w := newWorld(t, 1)
		w.setAlarmIn(10 * time.Second)
		assert.Zero(t, w.rt.Elapsed(), "Run returned at once: the alarm does not hold it")
		assert.Empty(t, w.alarms)
		at, ok := w.getAlarm()
		assert.True(t, ok)
		assert.Equal(t, runtime.Epoch.Add(10*time.Second), at)

		require.NoError(t, w.rt.Advance(9*time.Second))
		assert.Empty(t, w.alarms, "not yet due")
		require.NoError(t, w.rt.Advance(time.Minute))
		assert.Equal(t, []time.Duration{10 * time.Second}, w.alarmAt, "fired exactly when due")
		assert.Equal(t, []object.AlarmInfo{{RetryCount: 0, Scheduled: runtime.Epoch.Add(10 * time.Second)}}, w.alarms)
		_, ok = w.getAlarm()
		assert.False(t, ok, "a delivered alarm is deleted")
		assert.Equal(t, []string{"retry=0@10s"}, w.events(object.EventAlarm))
	})
	t.Run("while something else sleeps in Run", func(t *testing.T) {
		w := newWorld(t, 1)
		require.NoError(t, w.rt.Run(func(ctx context.Context) error {
			err := w.do(ctx, "a", func(ctx context.Context, st *object.State) error {
				return st.SetAlarm(ctx, st.Now().Add(5*time.Second))
			})
			if err != nil {
				return err
			}
			return w.rt.Sleep(ctx, 10*time.Second)
		}))
		assert.Equal(t, []time.Duration{5 * time.Second}, w.alarmAt)
	})
	t.Run("an instant already past fires at once", func(t *testing.T) {
		w := newWorld(t, 1)
		require.NoError(t, w.rt.Advance(time.Hour))
		w.inside(func(ctx context.Context, st *object.State) error {
			return st.SetAlarm(ctx, st.Now().Add(-time.Minute))
		})
		assert.Equal(t, []time.Duration{time.Hour}, w.alarmAt, "due now, so it ran before Run returned")
	})
	t.Run("one alarm per object: setting replaces, deleting cancels", func(t *testing.T) {
		w := newWorld(t, 1)
		w.setAlarmIn(10 * time.Second)
		w.setAlarmIn(20 * time.Second)
		require.NoError(t, w.rt.Advance(time.Minute))
		assert.Equal(t, []time.Duration{20 * time.Second}, w.alarmAt)
		w.setAlarmIn(10 * time.Second)
		w.inside(func(ctx context.Context, st *object.State) error { return st.DeleteAlarm(ctx) })
		require.NoError(t, w.rt.Advance(time.Minute))
		assert.Len(t, w.alarmAt, 1, "a deleted alarm never fires")
	})
}

// O6: a failing handler (error or panic) is retried after 2 s, 4 s, 8 s,
// 16 s and 32 s, learning its retry count, and then given up (real workerd
// 1.20261117.1, alarm-scheduler.c++). The object is key-value-backed,
// whose waits are exact; a SQLite-backed one's carry a jitter
// (runtime's TestO6_ASQLiteBackedObjectsRetryWaitsCarryAJitter).
func TestAlarmRetriesO6(t *testing.T) {
	cases := []struct {
		name   string
		fail   func(info object.AlarmInfo) error
		n      int // deliveries
		gaveUp bool
	}{
		{name: "always failing: six retries with doubling backoff, then given up",
			fail: func(object.AlarmInfo) error { return errors.New("handler failed") }, n: 6, gaveUp: true},
		{name: "a panic is a failure too",
			fail: func(object.AlarmInfo) error { panic("handler panicked") }, n: 6, gaveUp: true},
		{name: "succeeds on the third delivery", n: 3,
			fail: func(info object.AlarmInfo) error {
				if info.RetryCount < 2 {
					return fmt.Errorf("retry %d failed", info.RetryCount)
				}
				return nil
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, 1, runtime.KeyValueBacked())
			w.alarmErr = c.fail
			w.setAlarmIn(time.Second)
			// Deliveries at 1, 3, 7, 15, 31 and 63 s; the idle object is
			// not evicted before 70 s (rule L5), which would clear the
			// given-up alarm GetAlarm shows.
			require.NoError(t, w.rt.Advance(65*time.Second))
			require.Len(t, w.alarms, c.n)
			for i, info := range w.alarms {
				assert.Equal(t, i, info.RetryCount, "the handler learns its retry count")
				assert.Equal(t, i > 0, info.IsRetry)
				if i > 0 {
					assert.Equal(t, object.AlarmRetryWait(i-1), w.alarmAt[i]-w.alarmAt[i-1], "wait %d", i)
				}
			}
			at, ok := w.getAlarm()
			if c.gaveUp { // real workerd 1.20261117.1: getAlarm still shows the given-up alarm
				assert.True(t, ok, "GetAlarm shows the given-up alarm")
				assert.Equal(t, runtime.Epoch.Add(time.Second), at)
			} else {
				assert.False(t, ok, "nothing pending afterwards")
			}
			gaveUp := w.events(object.EventAlarmGaveUp)
			if c.gaveUp {
				require.Len(t, gaveUp, 1)
				assert.Contains(t, gaveUp[0], "retry=5")
				assert.Len(t, w.events(object.EventAlarmRetry), object.AlarmMaxRetries)
			} else {
				assert.Empty(t, gaveUp)
			}
		})
	}
}

// O6: while a failed alarm waits for its retry, GetAlarm returns the
// instant the alarm was first scheduled for, not the retry's; inside the
// handler it reports no alarm. Expected values: real workerd
// 1.20261117.1, as issue 22 reports it (getAlarm() after a failed alarm
// handler returns the originally scheduled time; null in the handler).
func TestO6_GetAlarmWhileARetryWaitsReturnsTheScheduledTime(t *testing.T) {
	w := newWorld(t, 1, runtime.KeyValueBacked()) // exact waits
	var inHandler []bool
	var a *object.State
	w.alarmErr = func(info object.AlarmInfo) error {
		_, ok, err := a.GetAlarm(context.Background())
		require.NoError(t, err)
		inHandler = append(inHandler, ok)
		return errors.New("no")
	}
	w.inside(func(ctx context.Context, st *object.State) error {
		a = st
		return st.SetAlarm(ctx, st.Now().Add(time.Second))
	})
	scheduled := runtime.Epoch.Add(time.Second)
	require.NoError(t, w.rt.Advance(time.Second))
	at, ok := w.getAlarm()
	assert.True(t, ok)
	assert.Equal(t, scheduled, at, "after the first failure")
	require.NoError(t, w.rt.Advance(2*time.Second)) // the first retry, 2 s later, fails too
	at, ok = w.getAlarm()
	assert.True(t, ok)
	assert.Equal(t, scheduled, at, "after the first retry failed")
	assert.Equal(t, []bool{false, false}, inHandler, "no alarm inside the handler")
}

// O6: the alarm is the runtime's, not the instance's: it survives an
// object reset, and its turn builds the object again.
func TestAlarmSurvivesResetO6(t *testing.T) {
	w := newWorld(t, 1)
	w.alarmErr = func(info object.AlarmInfo) error {
		if info.RetryCount == 0 {
			return errors.New("first delivery fails")
		}
		return nil
	}
	w.setAlarmIn(10 * time.Second)
	require.NoError(t, w.rt.Advance(10*time.Second))
	require.Len(t, w.alarms, 1)
	builds := w.builds
	w.crash("a", nil)
	require.Nil(t, w.ns.Instance(w.ns.IDFromName("a")), "the instance is gone")
	require.NoError(t, w.rt.Advance(time.Minute))
	require.Len(t, w.alarms, 2, "the retry was delivered after the reset")
	assert.Equal(t, 1, w.alarms[1].RetryCount, "with its retry count")
	assert.Equal(t, builds+1, w.builds, "the alarm's turn built the object again")
	assert.NotNil(t, w.ns.Instance(w.ns.IDFromName("a")))
}

// O6 and O3: an alarm's turn goes through the input gate; it runs only
// while no request holds the object.
func TestAlarmTurnTakesTheGateO6(t *testing.T) {
	w := newWorld(t, 1)
	var order []string
	w.alarmErr = func(object.AlarmInfo) error { order = append(order, "alarm"); return nil }
	w.inside(func(ctx context.Context, st *object.State) error {
		if err := st.SetAlarm(ctx, st.Now()); err != nil {
			return err
		}
		order = append(order, "request runs on")
		if err := st.Sleep(ctx, time.Second); err != nil { // yields the gate
			return err
		}
		order = append(order, "request ends")
		return nil
	})
	assert.Equal(t, []string{"request runs on", "alarm", "request ends"}, order)
}

// O6 bad input.
func TestAlarmBadInputO6(t *testing.T) {
	w := newWorld(t, 1)
	w.inside(func(ctx context.Context, st *object.State) error {
		err := st.SetAlarm(ctx, time.Time{})
		assert.ErrorIs(t, err, object.ErrAlarm)
		assert.EqualError(t, err, "object.State.SetAlarm: alarm: the time is zero (use DeleteAlarm to delete the alarm)")
		return nil
	})
	rt := runtime.New()
	defer rt.Close()
	var st *object.State
	ns := rt.Namespace("INVENTORY", func(s *object.State) object.Object { st = s; return examples.NewInventory(s) })
	s, err := ns.GetByName("x")
	require.NoError(t, err)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Get", "apple") // builds it
		return err
	}))
	err = rt.Run(func(ctx context.Context) error { return st.SetAlarm(ctx, st.Now()) })
	assert.ErrorIs(t, err, object.ErrAlarm)
	assert.EqualError(t, err, "object.State.SetAlarm: alarm: *examples.Inventory has no Alarm(ctx, object.AlarmInfo) error method")
}
