package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// delivery is one delivery of an alarm: when, and its retry count.
type delivery struct {
	at    time.Duration
	retry int
}

// recordingAlarm fails its first delivery and records every delivery.
type recordingAlarm struct {
	st    *object.State
	rt    *runtime.Runtime
	log   *[]delivery
	fails *int
}

func (a *recordingAlarm) Alarm(ctx context.Context, info object.AlarmInfo) error {
	*a.log = append(*a.log, delivery{a.rt.Elapsed(), info.RetryCount})
	if *a.fails > 0 {
		*a.fails--
		return errors.New("the handler fails")
	}
	return nil
}

func (a *recordingAlarm) Methods() object.Methods {
	return object.Methods{
		"Set": object.Func(func(ctx context.Context, d time.Duration) (time.Duration, error) {
			if err := a.st.SetAlarm(ctx, a.st.Now().Add(d)); err != nil {
				return 0, err
			}
			at, _, err := a.st.GetAlarm(ctx)
			return at.Sub(a.st.Now()), err
		}),
	}
}

// alarmRun runs calls (each a Set's offset, at its virtual time) on one
// object whose first fails deliveries fail, then lets a minute pass.
func alarmRun(t *testing.T, fails int, sets ...[2]time.Duration) (answers []time.Duration, log []delivery) {
	t.Helper()
	return alarmRunOn(t, runtime.KeyValueBacked(), fails, sets...)
}

// alarmRunOn is alarmRun in a namespace with the backend option backend
// (nil: SQLite-backed).
func alarmRunOn(t *testing.T, backend runtime.NamespaceOption, fails int, sets ...[2]time.Duration) (answers []time.Duration, log []delivery) {
	t.Helper()
	rt := runtime.New()
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("A", func(st *object.State) object.Object {
		return &recordingAlarm{st: st, rt: rt, log: &log, fails: &fails}
	}, backend)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		for _, s := range sets {
			if err := rt.Sleep(ctx, s[0]-rt.Elapsed()); err != nil {
				return err
			}
			st, err := ns.GetByName("a")
			if err != nil {
				return err
			}
			got, err := st.Call(ctx, "Set", s[1])
			if err != nil {
				return err
			}
			answers = append(answers, got.(time.Duration))
		}
		return nil
	}))
	require.NoError(t, rt.Advance(time.Minute))
	return answers, log
}

// O6: an alarm set in the past is set for now: getAlarm returns now, and
// it fires at once. The platform clamps the time (getAlarm right after
// setAlarm(now − 60 s) returns "now", real workerd 1.20261117.1, issue 34
// row 9).
func TestO6_AnAlarmInThePastIsSetForNow(t *testing.T) {
	answers, log := alarmRun(t, 0, [2]time.Duration{time.Second, -time.Minute})
	assert.Equal(t, []time.Duration{0}, answers, "getAlarm says now")
	assert.Equal(t, []delivery{{time.Second, 0}}, log, "it fires at once")
}

// O6: a SQLite-backed object's alarm set while a failed delivery waits
// for its retry shows in getAlarm, but the retry is what comes, counted,
// at its time (2 s and its jitter), and nothing after it. The platform:
// "setAlarm(now+100 ms) during a failed alarm's retry wait: getAlarm shows
// the new time, but the next delivery is the pending retry (~2 s,
// retryCount 1), then nothing" (real workerd 1.20261117.1 under localDisk
// storage, issue 34 row 5; internal/platformtest's alarm-set-during-retry).
func TestO6_AnAlarmSetDuringARetryWaitIsTheRetry(t *testing.T) {
	answers, log := alarmRunOn(t, nil, 1, [2]time.Duration{0, 0}, [2]time.Duration{100 * time.Millisecond, 100 * time.Millisecond})
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond}, answers, "getAlarm shows the new time")
	require.Len(t, log, 2, "the failed delivery and its retry, nothing after: %v", log)
	assert.Equal(t, delivery{0, 0}, log[0])
	assert.Equal(t, 1, log[1].retry, "the retry, counted")
	base := object.AlarmRetryWait(0)
	assert.GreaterOrEqual(t, log[1].at, base, "at its own time, not the new one's")
	assert.Less(t, log[1].at, base+base/object.AlarmJitterDivisor)
}

// O6: a key-value-backed object's alarm set while a failed delivery waits
// for its retry replaces the retry: it comes at its own time with
// retryCount 0, once (real workerd 1.20261117.1 under inMemory storage,
// internal/platformtest's alarm-set-during-retry: retryCounts [0, 0]).
func TestO6_AKeyValueBackedObjectsNewAlarmReplacesItsRetry(t *testing.T) {
	answers, log := alarmRunOn(t, runtime.KeyValueBacked(), 1, [2]time.Duration{0, 0}, [2]time.Duration{100 * time.Millisecond, 100 * time.Millisecond})
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond}, answers, "getAlarm shows the new time")
	require.Len(t, log, 2, "the failed delivery and the new alarm, nothing after: %v", log)
	assert.Equal(t, delivery{0, 0}, log[0])
	assert.Equal(t, delivery{200 * time.Millisecond, 0}, log[1], "the new alarm, at its time, counted from 0")
}
