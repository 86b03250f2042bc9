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

// L7: a turn whose reply the link lost (or whose caller was told while it
// ran) still ended, and its writes are durable: a later turn's failed
// write takes back its own writes only. (The default rates draw both
// kinds at once since issue 32; before, a lost reply left its writes
// pending, and the next failed write took them too.)
func TestL7_ALostRepliesWritesAreConfirmed(t *testing.T) {
	for _, lost := range []transport.Fault{transport.LoseResponse, transport.LoseWhileRunning, transport.FailAfterDelivery} {
		t.Run(lost.String(), func(t *testing.T) {
			rt := runtime.New(runtime.WithFaults(transport.Plan(
				transport.Rule{Method: "Add", Call: 1, Attempt: 1, Fault: lost},
				transport.Rule{Method: "Add", Call: 2, Attempt: 1, Fault: transport.StorageWriteFails})))
			t.Cleanup(func() { _ = rt.Close() })
			ns := rt.Namespace("BATCHER", func(st *object.State) object.Object { return &batcher{st: st} })
			id := ns.IDFromName("b")
			require.NoError(t, rt.Run(func(ctx context.Context) error {
				for _, k := range []string{"a", "b"} {
					s, err := ns.Get(id, stub.MaxRetries(0)) // no retry confirms the writes for it
					if err != nil {
						return err
					}
					_, _ = s.Call(ctx, "Add", k)
				}
				return nil
			}))
			assert.Contains(t, ns.Storage(id).Snapshot(), "a", "the first Add ran to its end: its write is durable")
			assert.NotContains(t, ns.Storage(id).Snapshot(), "b", "the second Add's write failed")
		})
	}
}

// payer writes then charges (Pay), or charges then writes (PayFirst).
type payer struct{ st *object.State }

func (p *payer) Methods() object.Methods {
	return object.Methods{
		"Pay": object.Func(func(ctx context.Context, k string) error {
			if err := p.st.Storage().Put(ctx, k, true); err != nil {
				return err
			}
			return p.st.Effect(ctx, "charge", k)
		}),
		"PayFirst": object.Func(func(ctx context.Context, k string) error {
			if err := p.st.Effect(ctx, "charge", k); err != nil {
				return err
			}
			return p.st.Storage().Put(ctx, k, true)
		}),
	}
}

// L7: an effect leaves the object as an outgoing request does: the
// output gate holds it until the writes before it are durable, and a
// write that fails there discards it. An effect made before the write
// has left already: the crash window a key written after its effect
// opens.
func TestL7_AnEffectWaitsForTheWritesBeforeIt(t *testing.T) {
	for _, tc := range []struct {
		method  string
		charges int
	}{{"Pay", 0}, {"PayFirst", 1}} {
		t.Run(tc.method, func(t *testing.T) {
			rt := runtime.New(runtime.WithFaults(transport.Plan(
				transport.Rule{Method: tc.method, Call: 1, Attempt: 1, Fault: transport.StorageWriteFails})))
			t.Cleanup(func() { _ = rt.Close() })
			ns := rt.Namespace("PAYER", func(st *object.State) object.Object { return &payer{st: st} })
			id := ns.IDFromName("p")
			var err error
			require.NoError(t, rt.Run(func(ctx context.Context) error {
				s, e := ns.Get(id, stub.MaxRetries(0))
				if e != nil {
					return e
				}
				_, err = s.Call(ctx, tc.method, "ada")
				return nil
			}))
			var se *stub.Error
			require.ErrorAs(t, err, &se, "the write failed")
			assert.True(t, se.DurableObjectReset)
			assert.Empty(t, ns.Storage(id).Snapshot())
			assert.Len(t, rt.Effects(), tc.charges)
		})
	}
}
