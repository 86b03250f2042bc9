package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// givenUp is an object whose alarm fails while failing is true; its
// methods set, read and delete the alarm. It counts the deliveries.
type givenUp struct {
	st         *object.State
	failing    bool
	deliveries []object.AlarmInfo
}

func (g *givenUp) Methods() object.Methods {
	return object.Methods{
		"Arm": object.Func(func(ctx context.Context, failing bool) error {
			g.failing = failing
			return g.st.SetAlarm(ctx, g.st.Now().Add(time.Second))
		}),
		"Get": object.Func(func(ctx context.Context) (*time.Time, error) {
			at, ok, err := g.st.GetAlarm(ctx)
			if !ok {
				return nil, err
			}
			return &at, err
		}),
		"Delete": object.Func(func(ctx context.Context) error { return g.st.DeleteAlarm(ctx) }),
	}
}

func (g *givenUp) Alarm(ctx context.Context, info object.AlarmInfo) error {
	g.deliveries = append(g.deliveries, info)
	if g.failing {
		return errors.New("alarm fails")
	}
	return nil
}

// giveUp makes a givenUp object, arms its failing alarm, and runs virtual
// time on until just after the alarm has been given up (6 deliveries, at
// 1, 3, 7, 15, 31 and 63 s), before the idle object can be evicted (70 s
// at the earliest, rule L5).
func giveUp(t *testing.T) (*runtime.Runtime, *runtime.Namespace, *givenUp, time.Time) {
	t.Helper()
	rt := newRuntime(t, runtime.WithSeed(1))
	g := &givenUp{}
	ns := rt.Namespace("G", func(st *object.State) object.Object {
		g.st = st
		return g
	}, runtime.KeyValueBacked()) // exact waits
	s := mustStub(t, ns, "g")
	run(t, rt, func(ctx context.Context) error { _, err := s.Call(ctx, "Arm", true); return err })
	require.NoError(t, rt.Advance(65*time.Second))
	require.Len(t, g.deliveries, 6, "given up after 6 deliveries")
	require.Len(t, eventsOf(rt, object.EventAlarmGaveUp), 1)
	return rt, ns, g, runtime.Epoch.Add(time.Second)
}

// getAlarm calls the object's Get through a new stub.
func getAlarm(t *testing.T, rt *runtime.Runtime, ns *runtime.Namespace) *time.Time {
	t.Helper()
	var at *time.Time
	run(t, rt, func(ctx context.Context) error {
		var err error
		v, err := mustStub(t, ns, "g").Call(ctx, "Get")
		at, _ = v.(*time.Time)
		return err
	})
	return at
}

// O6: after the last delivery of an alarm that kept failing, GetAlarm
// still returns the instant it was scheduled for, and the alarm never
// fires again; a reset of the object clears it (GetAlarm none, still no
// delivery), so does an eviction (dosim's choice: the platform's is not
// observable), a DeleteAlarm deletes it, and a new SetAlarm replaces it
// (delivered once, retryCount 0, then none). Expected values: real workerd
// 1.20261117.1, internal/platformtest's alarm-retry-all (afterAllIsScheduled,
// resetAfterResetIsNull, resetDeliveriesAfterReset, delAfterDeleteIsNull,
// setGetAlarmIsNew, setAgainDeliveries, setAgainAfterIsNull).
func TestO6_GetAlarmAfterTheLastDeliveryIsTheScheduledTime(t *testing.T) {
	t.Run("shown, never fired again", func(t *testing.T) {
		rt, ns, g, scheduled := giveUp(t)
		at := getAlarm(t, rt, ns)
		require.NotNil(t, at, "GetAlarm after the give-up")
		assert.Equal(t, scheduled, *at)
		require.NoError(t, rt.Advance(24*time.Hour))
		assert.Len(t, g.deliveries, 6, "never delivered again")
		assert.False(t, rt.Backlogs()[0].Alarm.Set, "nothing pending")
		// dosim's choice (an eviction is not observable on the binary):
		// the shown alarm goes with the instance, as at a reset.
		assert.Nil(t, getAlarm(t, rt, ns), "after the idle object was evicted")
	})
	t.Run("a reset clears it", func(t *testing.T) {
		rt, ns, g, _ := giveUp(t)
		require.NoError(t, ns.Reset(ns.IDFromName("g"), transport.ResetCodeUpdate))
		assert.Nil(t, getAlarm(t, rt, ns), "GetAlarm after the reset")
		require.NoError(t, rt.Advance(time.Hour))
		assert.Len(t, g.deliveries, 6, "never delivered again")
	})
	t.Run("DeleteAlarm deletes it", func(t *testing.T) {
		rt, ns, _, _ := giveUp(t)
		run(t, rt, func(ctx context.Context) error { _, err := mustStub(t, ns, "g").Call(ctx, "Delete"); return err })
		assert.Nil(t, getAlarm(t, rt, ns))
	})
	t.Run("SetAlarm replaces it", func(t *testing.T) {
		rt, ns, g, _ := giveUp(t)
		run(t, rt, func(ctx context.Context) error { _, err := mustStub(t, ns, "g").Call(ctx, "Arm", false); return err })
		at := getAlarm(t, rt, ns)
		require.NotNil(t, at)
		assert.Equal(t, rt.Now().Add(time.Second), *at, "the new alarm")
		require.NoError(t, rt.Advance(time.Minute))
		require.Len(t, g.deliveries, 7)
		assert.Equal(t, 0, g.deliveries[6].RetryCount, "a new alarm counts from 0")
		assert.False(t, g.deliveries[6].IsRetry)
		assert.Nil(t, getAlarm(t, rt, ns), "delivered: none")
	})
}

// O6, C1: a given-up alarm is part of the object's state: the history
// records it (GaveUp, at its first instant), and a turn replayed from that
// state reads it with GetAlarm as the live object did.
func TestO6_AGivenUpAlarmIsInTheStateATurnReplaysFrom(t *testing.T) {
	rt := newRuntime(t, runtime.WithSeed(1), runtime.WithHistory())
	g := &givenUp{}
	ctor := func(st *object.State) object.Object {
		g.st = st
		return g
	}
	ns := rt.Namespace("G", ctor, runtime.KeyValueBacked()) // exact waits
	run(t, rt, func(ctx context.Context) error { _, err := mustStub(t, ns, "g").Call(ctx, "Arm", true); return err })
	require.NoError(t, rt.Advance(65*time.Second))
	state := ns.ObjectStateOf(ns.IDFromName("g"))
	assert.Equal(t, runtime.AlarmState{GaveUp: true, At: runtime.Epoch.Add(time.Second)}, state.Alarm)

	got := getAlarm(t, rt, ns)
	require.NotNil(t, got)
	var turn runtime.Turn
	for _, tu := range rt.Turns() {
		if tu.Kind == runtime.TurnRequest && tu.Method == "Get" {
			turn = tu
		}
	}
	require.Equal(t, "Get", turn.Method)
	rep := runtime.Replay(ctor, state, turn)
	require.NoError(t, rep.Err)
	assert.True(t, rep.Exact, rep.Diverged)
	assert.Equal(t, got, rep.Value, "the replayed turn sees the given-up alarm's instant too")
}

// O6: after the last delivery of a SQLite-backed object's alarm that kept
// failing (the seventh), GetAlarm shows none, where a key-value-backed
// object's shows the scheduled instant
// (TestO6_GetAlarmAfterTheLastDeliveryIsTheScheduledTime): real workerd
// 1.20261117.1, internal/platformtest's alarm-retry-all, getAlarm() null
// under localDisk storage for each of its three objects.
func TestO6_ASQLiteBackedObjectShowsNoAlarmAfterTheLastDelivery(t *testing.T) {
	rt := newRuntime(t, runtime.WithSeed(1))
	g := &givenUp{}
	ns := rt.Namespace("G", func(st *object.State) object.Object {
		g.st = st
		return g
	})
	run(t, rt, func(ctx context.Context) error { _, err := mustStub(t, ns, "g").Call(ctx, "Arm", true); return err })
	for i := 0; i < 300 && len(g.deliveries) < 7; i++ {
		require.NoError(t, rt.Advance(time.Second))
	}
	require.Len(t, g.deliveries, 7, "given up after 7 deliveries")
	require.Len(t, eventsOf(rt, object.EventAlarmGaveUp), 1)
	assert.Nil(t, getAlarm(t, rt, ns), "GetAlarm after the give-up")
	assert.False(t, ns.ObjectStateOf(ns.IDFromName("g")).Alarm.GaveUp)
}
