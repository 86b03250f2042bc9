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

// beat re-arms its alarm every ten minutes, for ever or, with limit set,
// for limit deliveries.
type beat struct {
	st    *object.State
	limit int
}

func (b *beat) Methods() object.Methods {
	return object.Methods{
		"Start": object.Func(func(ctx context.Context) error { return b.st.SetAlarm(ctx, b.st.Now().Add(10*time.Minute)) }),
	}
}

func (b *beat) Alarm(ctx context.Context, _ object.AlarmInfo) error {
	var n int
	if _, err := b.st.Storage().Get(ctx, "n", &n); err != nil {
		return err
	}
	n++
	if err := b.st.Storage().Put(ctx, "n", n); err != nil {
		return err
	}
	if b.limit > 0 && n >= b.limit {
		return nil
	}
	return b.st.SetAlarm(ctx, b.st.Now().Add(10*time.Minute))
}

// startBeat runs Start on a beat object of a fresh runtime.
func startBeat(t *testing.T, limit int) *runtime.Runtime {
	t.Helper()
	rt := newRuntime(t)
	ns := rt.Namespace("BEAT", func(st *object.State) object.Object { return &beat{st: st, limit: limit} })
	s, err := ns.Get(ns.IDFromName("b"))
	require.NoError(t, err)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Start")
		return err
	}))
	return rt
}

// C8: Quiesce runs the background work that falls due in d; with none,
// it returns at once and time does not move.
func TestC8_QuiesceRunsTheBackgroundWork(t *testing.T) {
	rt := startBeat(t, 0)
	start := rt.Elapsed()
	require.NoError(t, rt.Quiesce(2*time.Hour))
	assert.Equal(t, start+2*time.Hour, rt.Elapsed())
	b := rt.Backlogs()
	require.Len(t, b, 1)
	assert.Equal(t, 12, b[0].AlarmRuns, "an alarm every ten minutes for two hours")
	assert.True(t, b[0].Alarm.Set)

	idle := newRuntime(t)
	require.NoError(t, idle.Quiesce(time.Hour))
	assert.Zero(t, idle.Elapsed(), "nothing pending: time does not move")
	_, err := idle.QuiesceUntil(-time.Second, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "d is -1s, must be >= 0")
}

// C8: QuiesceUntil goes on an hour at a time (a 24th of a shorter d) and
// stops after the step where done says so, or where nothing is left.
func TestC8_QuiesceUntilStopsWhenDoneOrSettled(t *testing.T) {
	rt := startBeat(t, 0)
	calls := 0
	ran, err := rt.QuiesceUntil(240*time.Hour, func(b []runtime.Backlog) bool {
		calls++
		return b[0].AlarmRuns >= 15
	})
	require.NoError(t, err)
	assert.Equal(t, 3*time.Hour, ran, "15 deliveries take 2.5h: it stops after the third hour")
	assert.Equal(t, 3, calls)
	assert.Equal(t, 18, rt.Backlogs()[0].AlarmRuns)

	rt = startBeat(t, 0)
	ran, err = rt.QuiesceUntil(2*time.Hour, func([]runtime.Backlog) bool { return false })
	require.NoError(t, err)
	assert.Equal(t, 2*time.Hour, ran, "never done: to the horizon, in steps of 5m")
	assert.Equal(t, 12, rt.Backlogs()[0].AlarmRuns)

	rt = startBeat(t, 4)
	ran, err = rt.QuiesceUntil(240*time.Hour, nil)
	require.NoError(t, err)
	assert.LessOrEqual(t, ran, time.Hour, "four deliveries, then nothing: it stops after the first step")
	assert.Equal(t, 4, rt.Backlogs()[0].AlarmRuns)
	assert.False(t, rt.BackgroundPending())
	assert.False(t, errors.Is(err, runtime.ErrHorizon))
}

// C8, O-rules' Advance: work that falls due exactly at the target runs
// before Advance (and each step of QuiesceUntil) returns, on every seed.
// The target's tie-break was drawn from the seed, so an alarm at the end of
// a step ran on some seeds and not others.
func TestC8_WorkDueAtTheTargetRunsOnEverySeed(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rt := newRuntime(t, runtime.WithSeed(seed))
		ns := rt.Namespace("BEAT", func(st *object.State) object.Object { return &beat{st: st} })
		s, err := ns.Get(ns.IDFromName("b"))
		require.NoError(t, err)
		require.NoError(t, rt.Run(func(ctx context.Context) error {
			_, err := s.Call(ctx, "Start")
			return err
		}))
		for range 6 {
			require.NoError(t, rt.Advance(10*time.Minute))
		}
		assert.Equal(t, 6, rt.Backlogs()[0].AlarmRuns, "seed %d: the alarm due at each target ran", seed)
	}
}
