package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batcher is the platform's alarms batcher, reduced: Add stores an item
// and arms the alarm; the alarm sends the batch (an effect) and deletes
// every key.
type batcher struct{ st *object.State }

func (b *batcher) Methods() object.Methods {
	return object.Methods{
		"Add": object.Func(func(ctx context.Context, k string) error {
			if err := b.st.Storage().Put(ctx, k, true); err != nil {
				return err
			}
			if _, set, err := b.st.GetAlarm(ctx); err != nil || set {
				return err
			}
			return b.st.SetAlarm(ctx, b.st.Now().Add(10*time.Second))
		}),
	}
}

func (b *batcher) Alarm(ctx context.Context, _ object.AlarmInfo) error {
	list, err := b.st.Storage().List(ctx, object.ListOptions{})
	if err != nil {
		return err
	}
	keys := make([]string, len(list))
	for i, e := range list {
		keys[i] = e.Key
	}
	if err := b.st.Effect(ctx, "batch", keys); err != nil {
		return err
	}
	return b.st.Storage().DeleteAll(ctx)
}

// L7: an alarm's completion confirms its writes. The alarm deletes the
// batch it sent and completes; a later call's write then fails: that
// failure takes back the call's own write, never the finished alarm's
// deleteAll, so the batch is not sent again.
func TestL7_ACompletedAlarmsWritesAreConfirmed(t *testing.T) {
	rt := runtime.New(runtime.WithFaults(transport.Plan(
		transport.Rule{Method: "Add", Call: 2, Attempt: 1, Fault: transport.StorageWriteFails})))
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("BATCHER", func(st *object.State) object.Object { return &batcher{st: st} })
	id := ns.IDFromName("b")
	var second error
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.Get(id)
		if err != nil {
			return err
		}
		if _, err := s.Call(ctx, "Add", "a"); err != nil {
			return err
		}
		if err := rt.Sleep(ctx, 11*time.Second); err != nil { // the alarm runs and completes
			return err
		}
		_, second = s.Call(ctx, "Add", "b")
		return rt.Sleep(ctx, time.Minute)
	}))
	var se *stub.Error
	require.ErrorAs(t, second, &se, "the second Add's write failed")
	assert.True(t, se.DurableObjectReset)
	assert.Empty(t, ns.Storage(id).Snapshot(), "the alarm's deleteAll stays; the failed write vanished")
	sent := 0
	for _, e := range rt.Effects() {
		if keys, _ := e.Payload.([]string); e.Kind == "batch" && len(keys) > 0 {
			assert.Equal(t, []string{"a"}, keys)
			sent++
		}
	}
	assert.Equal(t, 1, sent, "the batch is sent once: %s", rt.Trace())
}

// L7: setting the alarm is one of the turn's writes: when they are lost
// (storage-write-fails), the alarm is put back as it was, so a write
// failure never leaves an alarm armed by a turn whose other writes
// vanished.
func TestL7_ALostWriteTakesBackItsAlarm(t *testing.T) {
	rt := runtime.New(runtime.WithFaults(transport.Plan(
		transport.Rule{Method: "Add", Attempt: 1, Fault: transport.StorageWriteFails})))
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("BATCHER", func(st *object.State) object.Object { return &batcher{st: st} })
	id := ns.IDFromName("b")
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.Get(id)
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Add", "a")
		var se *stub.Error
		require.ErrorAs(t, err, &se)
		require.True(t, se.DurableObjectReset, "the write failed")
		return rt.Sleep(ctx, time.Minute)
	}))
	assert.Empty(t, ns.Storage(id).Snapshot(), "the put vanished")
	assert.Empty(t, rt.Effects(), "and so did the alarm it set: no batch is sent")
	assert.NotContains(t, rt.Trace(), "alarm retry=0", "the alarm never fired")
}
