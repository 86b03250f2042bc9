package runtime_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// H1: rt.Sleep(ctx, math.MaxInt64) used to return at once (its wake-up
// instant wrapped around). A sleep past the end of virtual time never
// ends, and a run left waiting for nothing but such sleeps ends with a
// *ClockError that names them.
func TestH1_ASleepPastTheEndOfVirtualTimeEndsTheRun(t *testing.T) {
	rt := newRuntime(t)
	woke := false
	err := rt.Run(func(ctx context.Context) error {
		if err := rt.Sleep(ctx, time.Second); err != nil {
			return err
		}
		err := rt.Sleep(ctx, math.MaxInt64)
		woke = true
		return err
	})
	require.ErrorIs(t, err, runtime.ErrClockStuck)
	var ce *runtime.ClockError
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.PastEnd)
	assert.Equal(t, time.Second, ce.Now)
	assert.Equal(t, []string{"root: sleeping (until past the end of virtual time)"}, ce.Pending)
	assert.Contains(t, err.Error(), "past the end of virtual time")
	assert.Contains(t, err.Error(), "math.MaxInt64")
	assert.False(t, woke)
	assert.Equal(t, time.Second, rt.Elapsed(), "the clock stops where the run could not go on")

	err = rt.Run(func(context.Context) error { return nil })
	require.ErrorIs(t, err, runtime.ErrClockStuck, "the root still sleeps: the runtime cannot run again, and says why")
	assert.Contains(t, err.Error(), "runtime.Run: the runtime cannot run again")
}

// H1: a sleep past the end waits like any other until then: time moves on
// for it, and its context can end it, so waiting "until cancelled" works.
func TestH1_ASleepPastTheEndEndsWhenItsContextDoes(t *testing.T) {
	rt := newRuntime(t)
	run(t, rt, func(ctx context.Context) error {
		require.NoError(t, rt.Sleep(ctx, time.Second)) // now+MaxInt64 wraps around from here
		tctx, cancel := runtime.WithTimeout(ctx, time.Minute)
		defer cancel()
		err := rt.Sleep(tctx, math.MaxInt64)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Minute+time.Second, rt.Elapsed())
		return nil
	})
}

// H1: runtime.WithTimeout(ctx, math.MaxInt64) used to be cancelled at
// once. A timeout past the end of virtual time never fires.
func TestH1_WithTimeoutPastTheEndNeverFires(t *testing.T) {
	rt := newRuntime(t)
	run(t, rt, func(ctx context.Context) error {
		require.NoError(t, rt.Sleep(ctx, time.Second)) // now+MaxInt64 wraps around from here
		tctx, cancel := runtime.WithTimeout(ctx, math.MaxInt64)
		defer cancel()
		require.NoError(t, rt.Sleep(tctx, 1000*time.Hour))
		assert.NoError(t, tctx.Err())
		deadline, ok := tctx.Deadline()
		assert.True(t, ok)
		assert.Equal(t, runtime.Epoch.Add(time.Second).Add(math.MaxInt64), deadline)
		return nil
	})
}

// H1: Advance(math.MaxInt64) used to do nothing and return nil; so did a
// Quiesce that long. Both are refused, saying how far the clock can go;
// moving it to the last instant works, and the clock stops there.
func TestH1_AdvancePastTheEndOfVirtualTimeIsRefused(t *testing.T) {
	rt := newRuntime(t)
	for _, call := range []struct {
		name string
		do   func(time.Duration) error
	}{
		{"runtime.Advance", rt.Advance},
		{"runtime.Quiesce", rt.Quiesce},
		{"runtime.QuiesceUntil", func(d time.Duration) error { _, err := rt.QuiesceUntil(d, nil); return err }},
	} {
		err := call.do(math.MaxInt64)
		require.ErrorIs(t, err, runtime.ErrClockStuck, call.name)
		assert.Contains(t, err.Error(), call.name+": d is 2562047h47m16.854775807s")
		assert.Contains(t, err.Error(), "at most 2562047h47m16.854775806s")
		assert.Zero(t, rt.Elapsed())
	}
	require.NoError(t, rt.Advance(runtime.MaxElapsed))
	assert.Equal(t, runtime.MaxElapsed, rt.Elapsed())
	err := rt.Advance(time.Nanosecond)
	require.ErrorIs(t, err, runtime.ErrClockStuck)
	assert.Contains(t, err.Error(), "at most 0s")
	require.NoError(t, rt.Advance(0))
}

// H1: a link delay past the end of virtual time (a fault rule's Delay)
// used to deliver at once; now the call never arrives and the run ends
// with a *ClockError.
func TestH1_ALinkDelayPastTheEndOfVirtualTimeEndsTheRun(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Start", Delay: math.MaxInt64})
	rt := newRuntime(t, runtime.WithFaults(plan))
	ns := rt.Namespace("BEAT", func(st *object.State) object.Object { return &beat{st: st} })
	s, err := ns.GetByName("b")
	require.NoError(t, err)
	err = rt.Run(func(ctx context.Context) error { _, err := s.Call(ctx, "Start"); return err })
	var ce *runtime.ClockError
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.PastEnd)
	assert.Zero(t, ce.Now)
	assert.Empty(t, rt.Backlogs(), "the call never reached the object")
}

// looper runs background work again at the same instant, up to max times:
// its alarm sets itself to now, its scheduled task schedules itself with no
// delay, its queue item queues itself. The tasks call another object first
// (so the lane turn waits, and the watchdog sees switches).
type looper struct {
	agent.Agent
	st   *object.State
	peer func() (*stub.Stub, error)
	max  int
	runs int
}

func (l *looper) Methods() object.Methods {
	return object.Methods{
		"Arm":      object.Func(func(ctx context.Context) error { return l.st.SetAlarm(ctx, l.st.Now()) }),
		"Schedule": object.Func(func(ctx context.Context) error { return l.schedule(ctx) }),
		"Queue":    object.Func(func(ctx context.Context) error { return l.queue(ctx) }),
		"Tick": object.Func(func(ctx context.Context) error {
			if err := l.ping(ctx); err != nil || l.runs >= l.max {
				return err
			}
			return l.schedule(ctx)
		}),
		"Item": object.Func(func(ctx context.Context) error {
			if err := l.ping(ctx); err != nil || l.runs >= l.max {
				return err
			}
			return l.queue(ctx)
		}),
		"Ping": object.Func(func(ctx context.Context) error { return nil }),
	}
}

func (l *looper) schedule(ctx context.Context) error {
	_, err := l.Schedule(ctx, agent.After(0), "Tick", nil)
	return err
}

func (l *looper) queue(ctx context.Context) error {
	_, err := l.Queue(ctx, "Item", nil)
	return err
}

func (l *looper) ping(ctx context.Context) error {
	l.runs++
	s, err := l.peer()
	if err != nil {
		return err
	}
	_, err = s.Call(ctx, "Ping")
	return err
}

func (l *looper) Alarm(ctx context.Context, _ object.AlarmInfo) error {
	if l.runs++; l.runs >= l.max {
		return nil
	}
	return l.st.SetAlarm(ctx, l.st.Now())
}

// H1: background work that runs again at the same instant for ever (an
// alarm its handler sets to now, a schedule or queue item that adds itself
// with no delay) used to hang Run: the clock never moved and the watchdog
// saw switches. Past the instant limit (runtime.WithInstantLimit) the run
// ends with a *ClockError naming the object. The loops here stop by
// themselves after 5,000 runs, so that without the limit the test ends too.
func TestH1_BackgroundWorkThatRunsAgainAtOneInstantEndsTheRun(t *testing.T) {
	for _, method := range []string{"Arm", "Schedule", "Queue"} {
		t.Run(method, func(t *testing.T) {
			rt := newRuntime(t, runtime.WithInstantLimit(100))
			peers := rt.Namespace("PEER", func(st *object.State) object.Object { return &looper{st: st} })
			l := &looper{max: 5000, peer: func() (*stub.Stub, error) { return peers.GetByName("p") }}
			ns := rt.Namespace("LOOP", func(st *object.State) object.Object { l.st = st; return l })
			s, err := ns.GetByName("l")
			require.NoError(t, err)
			err = rt.Run(func(ctx context.Context) error { _, err := s.Call(ctx, method); return err })
			require.ErrorIs(t, err, runtime.ErrClockStuck)
			var ce *runtime.ClockError
			require.ErrorAs(t, err, &ce)
			assert.False(t, ce.PastEnd)
			assert.Equal(t, "LOOP/l", ce.Object)
			assert.Equal(t, 100, ce.Limit)
			assert.Contains(t, err.Error(), "runtime.WithInstantLimit")
			assert.Equal(t, 100, l.runs, "the 101st run at the instant is refused")
			assert.Zero(t, rt.Elapsed())

			err = rt.Run(func(context.Context) error { return nil })
			require.ErrorAs(t, err, &ce, "the runtime cannot go on: it says why")
			assert.Contains(t, err.Error(), "runtime.Run: the runtime cannot run again")
		})
	}
}

// H1: the instant limit counts one object's background runs at one
// instant within one driver call: work that stops by itself under it, in
// Run after Run at the same instant, and any number of calls, pass.
func TestH1_TheInstantLimitLetsFiniteWorkPass(t *testing.T) {
	rt := newRuntime(t, runtime.WithInstantLimit(10))
	l := &looper{}
	ns := rt.Namespace("LOOP", func(st *object.State) object.Object { l.st = st; return l })
	s, err := ns.GetByName("l")
	require.NoError(t, err)
	for range 3 {
		l.max += 10 // ten deliveries a run: the alarm sets itself nine times
		run(t, rt, func(ctx context.Context) error {
			for range 100 {
				if _, err := s.Call(ctx, "Ping"); err != nil {
					return err
				}
			}
			_, err := s.Call(ctx, "Arm")
			return err
		})
	}
	assert.Equal(t, 30, l.runs)
	assert.Zero(t, rt.Elapsed())
}

// edge sets its alarm to a Unix time in seconds and counts deliveries.
type edge struct {
	st   *object.State
	runs int
}

func (e *edge) Methods() object.Methods {
	return object.Methods{"Set": object.Func(func(ctx context.Context, unix int64) error {
		return e.st.SetAlarm(ctx, time.Unix(unix, 0))
	})}
}

func (e *edge) Alarm(context.Context, object.AlarmInfo) error { e.runs++; return nil }

// O6: an alarm set to an instant long before the virtual clock's start
// (further back than a time.Duration reaches) fires at once; one set past
// the end of virtual time never fires.
func TestO6_AlarmsAtTheEdgesOfTimeFireAtOnceOrNever(t *testing.T) {
	rt := newRuntime(t)
	e := &edge{}
	ns := rt.Namespace("EDGE", func(st *object.State) object.Object { e.st = st; return e })
	s, err := ns.GetByName("e")
	require.NoError(t, err)
	set := func(at time.Time) {
		t.Helper()
		run(t, rt, func(ctx context.Context) error {
			if err := rt.Sleep(ctx, time.Second); err != nil { // the clock is past its start
				return err
			}
			_, err := s.Call(ctx, "Set", at.Unix())
			return err
		})
	}
	set(time.Date(1, time.January, 2, 0, 0, 0, 0, time.UTC))
	require.NoError(t, rt.Advance(time.Millisecond))
	assert.Equal(t, 1, e.runs, "an alarm in year 1 is past: it fires at once")

	set(time.Date(9999, time.January, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, rt.Advance(100*365*24*time.Hour))
	assert.Equal(t, 1, e.runs, "an alarm in year 9999 is past the end of virtual time")
	bl := rt.Backlogs()
	require.Len(t, bl, 1)
	assert.True(t, bl[0].Alarm.Set)
}
