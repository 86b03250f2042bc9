package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// cache keeps a value in a field and in storage, and counts its
// constructions.
type cache struct {
	agent.Agent
	st    *object.State
	field int
	built *int
	// stale is the storage error its last SlowPut got, if any.
	stale *error
}

func (c *cache) Methods() object.Methods {
	return object.Methods{
		"Set": object.Func(func(ctx context.Context, v int) error {
			c.field = v
			return c.st.Storage().Put(ctx, "v", v)
		}),
		"Field": object.Func(func(ctx context.Context) (int, error) { return c.field, nil }),
		"Stored": object.Func(func(ctx context.Context) (int, error) {
			var v int
			_, err := c.st.Storage().Get(ctx, "v", &v)
			return v, err
		}),
		// SlowPut sleeps, then writes, whatever the sleep returned: a reset
		// during the sleep makes it stale, and ends the sleep (L3).
		"SlowPut": object.Func(func(ctx context.Context, v int) error {
			_ = c.st.Sleep(ctx, time.Second)
			err := c.st.Storage().Put(ctx, "v", v)
			if c.stale != nil {
				*c.stale = err
			}
			return err
		}),
		"Arm": object.Func(func(ctx context.Context) error {
			if err := c.st.SetAlarm(ctx, c.st.Now().Add(10*time.Second)); err != nil {
				return err
			}
			_, err := c.Schedule(ctx, agent.After(20*time.Second), "Tick", nil)
			return err
		}),
		"Tick": object.Func(func(ctx context.Context) error { return c.st.Storage().Put(ctx, "ticked", true) }),
	}
}

func (c *cache) Alarm(ctx context.Context, _ object.AlarmInfo) error {
	return c.st.Storage().Put(ctx, "alarmed", true)
}

func cacheNS(t *testing.T, rt *runtime.Runtime, built *int, stale *error) *runtime.Namespace {
	t.Helper()
	return rt.Namespace("CACHE", func(st *object.State) object.Object {
		*built++
		return &cache{st: st, built: built, stale: stale}
	})
}

// L3: a reset loses the instance's fields; storage, the alarm and
// scheduled tasks survive, and the next delivery constructs a new instance.
func TestL3_ResetLosesFieldsKeepsStorageAlarmsTasks(t *testing.T) {
	rt := newRuntime(t)
	built := 0
	ns := cacheNS(t, rt, &built, nil)
	s := mustStub(t, ns, "c")
	id := ns.IDFromName("c")
	err := rt.Run(func(ctx context.Context) error {
		if _, err := s.Call(ctx, "Set", 7); err != nil {
			return err
		}
		if _, err := s.Call(ctx, "Arm"); err != nil {
			return err
		}
		return ns.Reset(id, transport.ResetMemoryLimit)
	})
	require.NoError(t, err)
	assert.Nil(t, ns.Instance(id), "the instance is dropped")
	err = rt.Run(func(ctx context.Context) error {
		f, err := stub.CallAs[int](ctx, s, "Field")
		require.NoError(t, err)
		assert.Zero(t, f, "in-memory fields are lost")
		v, err := stub.CallAs[int](ctx, s, "Stored")
		require.NoError(t, err)
		assert.Equal(t, 7, v, "storage survives")
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, built, "the next delivery constructed a new instance")
	require.NoError(t, rt.Advance(30*time.Second))
	snap := ns.Storage(id).Snapshot()
	assert.Equal(t, true, snap["alarmed"], "the alarm survived the reset")
	assert.Equal(t, true, snap["ticked"], "the scheduled task survived the reset")
	assert.Contains(t, rt.Trace(), `CACHE/c reset reason=memory-limit message="Durable Object's isolate exceeded its memory limit and was reset."`)
	assert.Len(t, eventsOf(rt, object.EventReset), 1)
}

func eventsOf(rt *runtime.Runtime, kind object.EventKind) []object.Event {
	return rt.Events(runtime.Match{Event: kind})
}

// L3: the platform's messages, verbatim, for each reason.
func TestL3_MessagesVerbatim(t *testing.T) {
	want := map[transport.ResetReason]string{
		transport.ResetCodeUpdate:  "Durable Object reset because its code was updated.",
		transport.ResetStorage:     "Internal error in Durable Object storage caused object to be reset",
		transport.ResetMemoryLimit: "Durable Object's isolate exceeded its memory limit and was reset.",
	}
	for r, msg := range want {
		assert.Equal(t, msg, r.Message(), "%v", r)
		got, err := transport.ParseResetReason(r.String())
		require.NoError(t, err)
		assert.Equal(t, r, got)
	}
	_, err := transport.ParseResetReason("deploy")
	require.ErrorIs(t, err, transport.ErrUnknownResetReason)
	assert.Contains(t, err.Error(), "allowed are code-update, storage, memory-limit")

	rt := newRuntime(t)
	built := 0
	ns := cacheNS(t, rt, &built, nil)
	assert.ErrorIs(t, ns.Reset(ns.IDFromName("c"), transport.NoReset), transport.ErrUnknownResetReason)
}

// L3: the request running when the object is reset fails at once with the
// reason's message, flagged DurableObjectReset, and is not retried (S4).
func TestL3_RunningRequestFailsNotRetried(t *testing.T) {
	for _, reason := range transport.ResetReasons() {
		t.Run(reason.String(), func(t *testing.T) {
			rt := newRuntime(t)
			built := 0
			ns := cacheNS(t, rt, &built, nil)
			s := mustStub(t, ns, "c")
			id := ns.IDFromName("c")
			var callErr error
			var failedAt time.Duration
			err := rt.Run(func(ctx context.Context) error {
				g := rt.Group(ctx)
				g.Go(func(ctx context.Context) error {
					_, callErr = s.Call(ctx, "SlowPut", 1)
					failedAt = rt.Now().Sub(runtime.Epoch)
					return nil
				})
				g.Go(func(ctx context.Context) error {
					if err := rt.Sleep(ctx, 500*time.Millisecond); err != nil {
						return err
					}
					return ns.Reset(id, reason)
				})
				return g.Wait()
			})
			require.NoError(t, err)
			var e *stub.Error
			require.ErrorAs(t, callErr, &e)
			assert.True(t, e.DurableObjectReset)
			assert.False(t, e.Retryable, "after delivery: not retried")
			assert.Contains(t, e.Error(), reason.Message())
			// The turn ran on its caller's task (no latency, gate free), so
			// the caller learns of the reset when the method returns.
			assert.LessOrEqual(t, failedAt, time.Second)
			c := rt.Calls()[0]
			assert.Len(t, c.Attempts, 1)
			assert.Equal(t, transport.OutcomeNotRetryable, c.Outcome)
		})
	}
}

// L4: a stale instance (reset while its first attempt still runs) that
// touches storage gets an error wrapping ErrStorage that says it was reset,
// and writes nothing.
func TestL4_StaleInstanceCannotWrite(t *testing.T) {
	rt := newRuntime(t)
	built := 0
	var stale error
	ns := cacheNS(t, rt, &built, &stale)
	s := mustStub(t, ns, "c")
	id := ns.IDFromName("c")
	err := rt.Run(func(ctx context.Context) error {
		if _, err := s.Call(ctx, "Set", 1); err != nil {
			return err
		}
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error { _, _ = s.Call(ctx, "SlowPut", 99); return nil })
		g.Go(func(ctx context.Context) error {
			if err := rt.Sleep(ctx, 500*time.Millisecond); err != nil {
				return err
			}
			if err := ns.Reset(id, transport.ResetCodeUpdate); err != nil {
				return err
			}
			// A new instance serves the object meanwhile.
			_, err := s.Call(ctx, "Set", 2)
			return err
		})
		return g.Wait()
	})
	require.NoError(t, err)
	require.Error(t, stale, "the stale instance's write failed")
	assert.ErrorIs(t, stale, object.ErrStorage)
	assert.ErrorIs(t, stale, object.ErrInstanceReset)
	assert.Contains(t, stale.Error(), "reset (code-update)")
	assert.Equal(t, 2, ns.Storage(id).Snapshot()["v"], "the stale write changed nothing")
	assert.Equal(t, 2, built)
	assert.Equal(t, 500*time.Millisecond, rt.Calls()[1].Attempts[0].End, "the stale attempt is recorded to its end, where the reset ended its sleep (D3, L3)")
}

// L5: an idle object is evicted after its seeded idle time: fields lost,
// storage kept, the constructor runs again on the next event, the trace
// records it; eviction never moves time on by itself.
func TestL5_EvictedAfterIdleConstructorRunsAgain(t *testing.T) {
	rt := newRuntime(t)
	built := 0
	ns := cacheNS(t, rt, &built, nil)
	s := mustStub(t, ns, "c")
	id := ns.IDFromName("c")
	require.NoError(t, rt.Run(func(ctx context.Context) error { _, err := s.Call(ctx, "Set", 5); return err }))
	assert.Zero(t, rt.Now().Sub(runtime.Epoch), "eviction keeps no time moving")
	assert.NotNil(t, ns.Instance(id))
	require.NoError(t, rt.Advance(69*time.Second))
	assert.NotNil(t, ns.Instance(id), "not evicted before 70 s")
	require.NoError(t, rt.Advance(72*time.Second))
	assert.Nil(t, ns.Instance(id), "evicted by 141 s")
	ev := eventsOf(rt, object.EventEvicted)
	require.Len(t, ev, 1)
	assert.Equal(t, ev[0].At, ev[0].Delay, "evicted its idle time after the last activity (at 0)")
	assert.Contains(t, rt.Trace(), "CACHE/c evicted idle=")
	err := rt.Run(func(ctx context.Context) error {
		f, err := stub.CallAs[int](ctx, s, "Field")
		require.NoError(t, err)
		assert.Zero(t, f, "in-memory state dropped")
		v, err := stub.CallAs[int](ctx, s, "Stored")
		require.NoError(t, err)
		assert.Equal(t, 5, v, "storage kept")
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, built, "the constructor ran again")
}

// L5: WithEviction(false) keeps idle objects.
func TestL5_EvictionOffByOption(t *testing.T) {
	rt := newRuntime(t, runtime.WithEviction(false))
	built := 0
	ns := cacheNS(t, rt, &built, nil)
	s := mustStub(t, ns, "c")
	require.NoError(t, rt.Run(func(ctx context.Context) error { _, err := s.Call(ctx, "Set", 5); return err }))
	require.NoError(t, rt.Advance(time.Hour))
	assert.NotNil(t, ns.Instance(ns.IDFromName("c")))
	assert.Empty(t, eventsOf(rt, object.EventEvicted))
	assert.NotContains(t, rt.Trace(), "evicted")
}

// L5: the idle time is within [70 s, 140 s], the same for a seed and an
// object, and varies with them; activity postpones eviction.
func TestL5_IdleTimeSeededWithinBounds(t *testing.T) {
	idle := func(seed uint64, name string) time.Duration {
		rt := newRuntime(t, runtime.WithSeed(seed))
		built := 0
		ns := cacheNS(t, rt, &built, nil)
		s := mustStub(t, ns, name)
		require.NoError(t, rt.Run(func(ctx context.Context) error {
			if _, err := s.Call(ctx, "Set", 1); err != nil {
				return err
			}
			if err := rt.Sleep(ctx, 60*time.Second); err != nil { // activity at 60 s postpones it
				return err
			}
			_, err := s.Call(ctx, "Set", 2)
			return err
		}))
		require.NoError(t, rt.Advance(300*time.Second))
		ev := eventsOf(rt, object.EventEvicted)
		require.Len(t, ev, 1)
		assert.Equal(t, 60*time.Second+ev[0].Delay, ev[0].At, "idle time counts from the last activity")
		return ev[0].Delay
	}
	seen := map[time.Duration]bool{}
	for seed := uint64(1); seed <= 6; seed++ {
		for _, name := range []string{"a", "b"} {
			d := idle(seed, name)
			assert.GreaterOrEqual(t, d, runtime.EvictAfterMin)
			assert.LessOrEqual(t, d, runtime.EvictAfterMax)
			assert.Equal(t, d, idle(seed, name), "deterministic per seed and object")
			seen[d] = true
		}
	}
	assert.Greater(t, len(seen), 6, "the idle time varies with seed and object")
}

// L5: eviction leaves the seeded sequence alone: the same program gives the
// same calls (request identities included) with eviction on or off.
func TestL5_EvictionLeavesTheTraceOfCallsAlone(t *testing.T) {
	calls := func(on bool) string {
		rt := newRuntime(t, runtime.WithEviction(on))
		built := 0
		ns := cacheNS(t, rt, &built, nil)
		s := mustStub(t, ns, "c")
		require.NoError(t, rt.Run(func(ctx context.Context) error {
			for i := range 3 {
				if _, err := s.Call(ctx, "Set", i); err != nil {
					return err
				}
				if err := rt.Sleep(ctx, 200*time.Second); err != nil {
					return err
				}
			}
			return nil
		}))
		var b strings.Builder
		for _, c := range rt.Calls() {
			fmt.Fprintln(&b, c.RequestID, c.Start, c.End, c.Outcome)
		}
		return b.String()
	}
	assert.Equal(t, calls(false), calls(true))
}

var _ = errors.New
