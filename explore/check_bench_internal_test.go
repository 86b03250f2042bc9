package explore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/require"
)

// bigHistory runs an inventory-style history of calls over keys keys,
// from tasks concurrent callers, with the reply of AddOne's first attempt
// lost on the calls whose number divides by every (an ambiguous call: the
// retry is refused as a duplicate, the caller cannot tell it ran), and
// returns what the check reads of it and how many calls were ambiguous.
func bigHistory(tb testing.TB, calls, keys, tasks, every int) (*runView, int) {
	tb.Helper()
	var rules []transport.Rule
	for n := every; n <= calls; n += every {
		rules = append(rules, transport.Rule{Call: n, Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse})
	}
	rt := runtime.New(runtime.WithSeed(1), runtime.WithHistory(), runtime.WithFaults(transport.Plan(rules...)))
	tb.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	err := rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		for w := range tasks {
			g.Go(func(ctx context.Context) error {
				for i := range calls / tasks {
					s, err := ns.GetByName("shop")
					if err != nil {
						return err
					}
					item := fmt.Sprintf("item-%d", (w*7+i)%keys)
					switch i % 3 {
					case 0:
						_, _ = s.Call(ctx, "SetQuantity", item, i)
					case 1:
						_, _ = s.Call(ctx, "AddOne", item)
					default:
						_, _ = s.Call(ctx, "Get", item)
					}
					if err := rt.Sleep(ctx, time.Millisecond); err != nil {
						return err
					}
				}
				return nil
			})
		}
		return g.Wait()
	})
	require.NoError(tb, err)
	cs := rt.Calls()
	require.Len(tb, cs, calls)
	ambiguous := 0
	for _, c := range cs {
		if c.Outcome == transport.OutcomeDuplicateRejected {
			ambiguous++
		}
	}
	v := &runView{Calls: cs, Seen: make([]seen, len(cs)), History: rt.History(), Effects: rt.Effects(),
		Ctors: map[string]runtime.Constructor{"INVENTORY": examples.NewInventory}}
	for i, c := range cs {
		switch {
		case c.Outcome == transport.OutcomeOK || c.Outcome == transport.OutcomeRecovered:
			v.Seen[i] = seen{known: true, key: resultKey(c.Result, nil)}
		case c.ObjectErr != "":
			v.Seen[i] = seen{known: true, key: "err " + c.ObjectErr}
		}
	}
	return v, ambiguous
}

// BenchmarkCheckHistory checks one object's history of 1,000 calls over
// 10 keys with 100 ambiguous calls (inventory-style: set, add, get, from
// 10 concurrent callers), each time with a cold model (no memo), on one
// core (rule C4). It reports the steps the model replayed and the share
// of the time they took; the rest is porcupine's search.
func BenchmarkCheckHistory(b *testing.B) {
	for _, size := range []int{1000, 10_000} {
		b.Run(fmt.Sprintf("calls=%d", size), func(b *testing.B) {
			v, ambiguous := bigHistory(b, size, 10, 10, 2)
			var steps int
			var replaying time.Duration
			b.ResetTimer()
			for range b.N {
				ms := newModels()
				ms.timed = true
				rep := checkLinear(1, v, ms, DefaultMaxAmbiguous, nil, nil, 0)
				if rep.checked != 1 || len(rep.violations) != 0 {
					b.Fatalf("checked %d, violations %v, unchecked %v", rep.checked, rep.violations, rep.unchecked)
				}
				m := ms.get("INVENTORY", "shop")
				steps += len(m.steps)
				replaying += ms.replaying
			}
			b.ReportMetric(float64(steps)/float64(b.N), "replays/op")
			b.ReportMetric(100*replaying.Seconds()/b.Elapsed().Seconds(), "%replaying")
			b.ReportMetric(float64(ambiguous), "ambiguous")
		})
	}
}

// C4: the checker's cost grows with what can interleave, not with the
// ambiguous calls: a 1,000-call history with 100 of them is checked (and
// found clean) with about one replay per operation.
func TestC4_ALongHistoryWithManyAmbiguousCallsIsChecked(t *testing.T) {
	v, ambiguous := bigHistory(t, 1000, 10, 10, 2)
	require.GreaterOrEqual(t, ambiguous, 100, "at least 100 ambiguous calls")
	ms := newModels()
	rep := checkLinear(1, v, ms, DefaultMaxAmbiguous, nil, nil, 0)
	require.Equal(t, 1, rep.checked, "unchecked: %v", rep.unchecked)
	require.Empty(t, rep.violations)
	steps := len(ms.get("INVENTORY", "shop").steps)
	require.Less(t, steps, 3000, "about one replay per operation, not an exponential search")
}
