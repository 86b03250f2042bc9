package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tally counts per key; Relay asks another tally to count first.
type tally struct {
	st   *object.State
	peer *Namespace
}

func (c *tally) Methods() object.Methods {
	return object.Methods{
		"Add":   object.Func(c.Add),
		"Relay": object.Func(c.Relay),
		"Nap":   object.Retryable(c.Nap),
	}
}

func (c *tally) Add(ctx context.Context, key string) (int, error) {
	var n int
	if _, err := c.st.Storage().Get(ctx, key, &n); err != nil {
		return 0, err
	}
	n++
	return n, c.st.Storage().Put(ctx, key, n)
}

func (c *tally) Relay(ctx context.Context, key string) (int, error) {
	s, err := c.peer.GetByName("peer")
	if err != nil {
		return 0, err
	}
	n, err := stub.CallAs[int](ctx, s, "Add", key)
	if err != nil {
		return 0, err
	}
	return c.Add(ctx, key+fmt.Sprint(n))
}

func (c *tally) Nap(ctx context.Context, _ string) error { return c.st.Sleep(ctx, 3*time.Millisecond) }

// courierWorld runs, under latency and random faults, callers (workers
// of them at once) on stubs of their own and on one shared stub, calls
// that call out, and calls that sleep, and returns the trace and the
// records' text.
func courierWorld(t *testing.T, seed uint64, lat transport.Latency, workers int) (string, string) {
	t.Helper()
	plan := transport.Random(transport.Rates{transport.LoseResponse: 0.05, transport.LoseRequest: 0.05,
		transport.LoseWhileRunning: 0.05, transport.NotDelivered: 0.05, transport.Reset: 0.02}).WithLatency(lat)
	rt := New(WithSeed(seed), WithFaults(plan), WithHistory())
	defer rt.Close()
	peers := rt.Namespace("PEER", func(st *object.State) object.Object { return &tally{st: st} })
	ns := rt.Namespace("C", func(st *object.State) object.Object { return &tally{st: st, peer: peers} })
	shared, err := ns.GetByName("a")
	require.NoError(t, err)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		for i := range workers {
			g.Go(func(ctx context.Context) error {
				own, err := ns.GetByName([]string{"a", "b"}[i%2])
				if err != nil {
					return err
				}
				for j := range 4 {
					_, _ = own.Call(ctx, []string{"Add", "Relay", "Nap", "Add"}[(i+j)%4], "k")
					_, _ = shared.Call(ctx, "Add", "s")
				}
				return nil
			})
		}
		return g.Wait()
	}))
	return rt.Trace(), fmt.Sprint(rt.Calls())
}

// TestD1_TheCourierKeepsTheTimersTrace: a first attempt carried by its
// caller (courier) gives, seed for seed, the trace and records the timer's
// path gives, when nothing else falls due at the instant its turn starts
// or its reply comes: one caller at a time, on several stubs, with calls
// that call out, sleep, fail and reset.
func TestD1_TheCourierKeepsTheTimersTrace(t *testing.T) {
	defer noCourier.Store(false)
	for _, lat := range []transport.Latency{{P50: 2 * time.Millisecond, P99: 100 * time.Millisecond}, {P50: 0, P99: 3 * time.Millisecond}} {
		for seed := range uint64(200) {
			noCourier.Store(true)
			trace, recs := courierWorld(t, seed, lat, 1)
			noCourier.Store(false)
			trace2, recs2 := courierWorld(t, seed, lat, 1)
			require.Equal(t, trace, trace2, "latency %v seed %d", lat, seed)
			require.Equal(t, recs, recs2, "latency %v seed %d", lat, seed)
		}
	}
}

// TestD1_CarriedCallsAreDeterministic: with concurrent callers the courier
// runs a turn as host.inline does, as a task picked first among the events
// of its instant (so where two fall due at once the trace may differ from
// the timer's), and the same seed still gives the same trace.
func TestD1_CarriedCallsAreDeterministic(t *testing.T) {
	lat := transport.Latency{P50: 2 * time.Millisecond, P99: 100 * time.Millisecond}
	defer noCourier.Store(false)
	kept := 0
	for seed := range uint64(100) {
		trace, recs := courierWorld(t, seed, lat, 4)
		again, recs2 := courierWorld(t, seed, lat, 4)
		require.Equal(t, trace, again, "seed %d", seed)
		require.Equal(t, recs, recs2, "seed %d", seed)
		noCourier.Store(true)
		timer, _ := courierWorld(t, seed, lat, 4)
		noCourier.Store(false)
		if timer == trace {
			kept++
		}
	}
	t.Logf("%d of 100 seeds with 4 concurrent callers: the timer's trace", kept)
	assert.Positive(t, kept)
}

// BenchmarkCourier is one call with link latency (explore's default, on
// the request and the reply), carried by its caller (courier) or
// delivered by a timer, its turn then a task of its own (timer); and, as
// each explored seed is, the first call of a new runtime (seed), where
// the timer's turn task also starts the kernel's second goroutine and
// grows its stack.
func BenchmarkCourier(b *testing.B) {
	lat := transport.Latency{P50: 2 * time.Millisecond, P99: 100 * time.Millisecond}
	for _, path := range []string{"courier", "timer"} {
		b.Run(path+"/call", func(b *testing.B) {
			noCourier.Store(path == "timer")
			defer noCourier.Store(false)
			rt := New(WithFaults(transport.Plan().WithLatency(lat)))
			defer rt.Close()
			ns := rt.Namespace("C", func(st *object.State) object.Object { return &tally{st: st} })
			b.ReportAllocs()
			err := rt.Run(func(ctx context.Context) error {
				s, err := ns.GetByName("a")
				if err != nil {
					return err
				}
				b.ResetTimer()
				for range b.N {
					if _, err := s.Call(ctx, "Add", "k"); err != nil {
						return err
					}
				}
				b.StopTimer()
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
		b.Run(path+"/seed", func(b *testing.B) {
			noCourier.Store(path == "timer")
			defer noCourier.Store(false)
			b.ReportAllocs()
			for i := range b.N {
				rt := New(WithSeed(uint64(i)), WithFaults(transport.Plan().WithLatency(lat)))
				ns := rt.Namespace("C", func(st *object.State) object.Object { return &tally{st: st} })
				err := rt.Run(func(ctx context.Context) error {
					s, err := ns.GetByName("a")
					if err != nil {
						return err
					}
					for range 3 {
						if _, err := s.Call(ctx, "Add", "k"); err != nil {
							return err
						}
					}
					return nil
				})
				rt.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
