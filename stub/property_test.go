package stub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"pgregory.net/rapid"
)

// genPlan draws a fault plan: a few rules on Add (unmarked) and Set
// (marked), with link latency, plus random rates.
func genPlan(t *rapid.T) *transport.FaultPlan {
	faults := append([]transport.Fault{transport.None}, transport.AttemptFaults()...)
	n := rapid.IntRange(0, 6).Draw(t, "rules")
	rules := make([]transport.Rule, n)
	for i := range rules {
		rules[i] = transport.Rule{
			Method:  rapid.SampledFrom([]string{"", "Add", "Set"}).Draw(t, "method"),
			Attempt: rapid.IntRange(0, 6).Draw(t, "attempt"),
			Fault:   rapid.SampledFrom(faults).Draw(t, "fault"),
			Delay:   time.Duration(rapid.IntRange(0, 8000).Draw(t, "delayMs")) * time.Millisecond,
		}
	}
	rates := transport.Rates{}
	for _, f := range transport.AttemptFaults() { // a stub's attempts meet these
		rates[f] = rapid.Float64Range(0, 0.12).Draw(t, "rate-"+f.String())
	}
	return transport.Plan(rules...).WithRandom(rates)
}

// runProgram runs a few concurrent calls under plan and returns the
// runtime (for its records) and the options used.
func runProgram(t *rapid.T, seed uint64, plan *transport.FaultPlan, maxRetries, timeoutMs int) *runtime.Runtime {
	rt := runtime.New(runtime.WithSeed(seed), runtime.WithFaults(plan))
	ns := rt.Namespace("PROBE", newProbe)
	s, err := ns.GetByName("p", stub.MaxRetries(maxRetries), stub.TimeoutMs(timeoutMs))
	if err != nil {
		t.Fatal(err)
	}
	err = rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		for i := range 4 {
			g.Go(func(ctx context.Context) error {
				if i%2 == 0 {
					_, _ = s.Call(ctx, "Add")
				} else {
					_, _ = s.Call(ctx, "Set", i)
				}
				return nil
			})
		}
		return g.Wait()
	})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return rt
}

// The S-rule invariants hold for any plan and seed: an unmarked method
// runs at most once per call (S6); attempts <= MaxRetries+1 (S2); no
// retry starts at or after start+timeout (S9); attempt 1 is never
// cancelled (S9); one subrequest per call (S13); one identity per call
// (S5); and the same seed gives the same trace (D1).
func TestRetryInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		maxRetries := rapid.IntRange(stub.MinMaxRetries, stub.MaxMaxRetries).Draw(t, "maxRetries")
		timeoutMs := rapid.IntRange(stub.MinTimeoutMs, stub.MaxTimeoutMs).Draw(t, "timeoutMs")
		plan := genPlan(t)
		rt := runProgram(t, seed, plan, maxRetries, timeoutMs)
		defer rt.Close()
		calls := rt.Calls()
		if len(calls) != 4 {
			t.Fatalf("seed %d: %d calls recorded, want 4", seed, len(calls))
		}
		timeout := time.Duration(timeoutMs) * time.Millisecond
		for _, c := range calls {
			where := fmt.Sprintf("seed %d, %s %s", seed, c.Method, c.RequestID)
			if c.Method == "Add" && c.Executions() > 1 {
				t.Fatalf("%s: unmarked method ran %d times (S6)", where, c.Executions())
			}
			if len(c.Attempts) > maxRetries+1 {
				t.Fatalf("%s: %d attempts > MaxRetries+1 = %d (S2)", where, len(c.Attempts), maxRetries+1)
			}
			if c.Subrequests != 1 {
				t.Fatalf("%s: %d subrequests (S13)", where, c.Subrequests)
			}
			if c.Outcome == transport.OutcomePending {
				t.Fatalf("%s: call never finished", where)
			}
			if bad := identityFault(c); bad != "" {
				t.Fatalf("%s: %s (S5)", where, bad)
			}
			for _, a := range c.Attempts {
				if a.N > 1 && a.Start >= c.Start+timeout {
					t.Fatalf("%s: attempt %d started at %v, deadline %v (S9)", where, a.N, a.Start, c.Start+timeout)
				}
				if a.N == 1 && a.Cancelled {
					t.Fatalf("%s: attempt 1 was cancelled (S9)", where)
				}
			}
		}
		again := runProgram(t, seed, plan, maxRetries, timeoutMs)
		defer again.Close()
		if rt.Trace() != again.Trace() {
			t.Fatalf("seed %d: two runs gave different traces (D1)", seed)
		}
	})
}
