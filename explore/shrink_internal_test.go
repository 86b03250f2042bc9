package explore

import (
	"context"
	"math/bits"
	"slices"
	"testing"
	"time"

	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
)

func rules(n int) []transport.Rule {
	out := make([]transport.Rule, n)
	for i := range out {
		out[i] = transport.Rule{Call: i + 1, Attempt: 1, Fault: transport.LoseResponse}
	}
	return out
}

// failsWith is a test that fails when every named call's fault is kept,
// and counts its replays.
func failsWith(replays *int, calls ...int) func([]transport.Rule) (bool, bool) {
	return func(rs []transport.Rule) (bool, bool) {
		*replays++
		for _, c := range calls {
			if !slices.ContainsFunc(rs, func(r transport.Rule) bool { return r.Call == c }) {
				return false, false
			}
		}
		return true, false
	}
}

// Shrinking used to drop one fault at a time, each drop a whole replay:
// quadratic in the scenario. ddmin finds the fault that matters among
// 100,000 in about 2·log2(n) replays; k that matter only together take
// a number of replays that still grows with log2(n), not with n (about
// 210 for two among 100,000, 120 among 1,000).
func TestH2_DdminShrinksInLogarithmicReplays(t *testing.T) {
	const n = 100_000
	log := bits.Len(n)
	for _, tc := range []struct {
		name  string
		calls []int
		max   int
	}{
		{"one fault", []int{77_777}, 2*log + 2},
		{"one fault, the first", []int{1}, 2*log + 2},
		{"two faults far apart", []int{3, 99_000}, 16 * log},
		{"two faults side by side", []int{50_000, 50_001}, 16 * log},
		{"three faults", []int{3, 33_333, 99_990}, 32 * log},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replays := 0
			got, res := ddmin(rules(n), failsWith(&replays, tc.calls...))
			assert.Equal(t, ShrinkDone, res)
			var calls []int
			for _, r := range got {
				calls = append(calls, r.Call)
			}
			assert.Equal(t, tc.calls, calls)
			assert.LessOrEqual(t, replays, tc.max, "replays")
		})
	}
}

// A run that fails with no fault at all shrinks to nothing in two replays.
func TestH2_DdminFailingWithoutFaults(t *testing.T) {
	replays := 0
	got, res := ddmin(rules(1000), failsWith(&replays))
	assert.Equal(t, ShrinkDone, res)
	assert.Empty(t, got)
	assert.Equal(t, 2, replays)
}

// When the drawn faults replayed as rules do not fail, nothing is shrunk
// and the result says so.
func TestH2_DdminNotReproduced(t *testing.T) {
	all := rules(10)
	got, res := ddmin(all, func([]transport.Rule) (bool, bool) { return false, false })
	assert.Equal(t, ShrinkNotReproduced, res)
	assert.Equal(t, all, got)
}

// When the budget runs out, the smallest failing set so far is kept.
func TestH2_DdminBudget(t *testing.T) {
	replays := 0
	inner := failsWith(&replays, 500)
	test := func(rs []transport.Rule) (bool, bool) {
		if replays == 5 {
			return false, true
		}
		return inner(rs)
	}
	got, res := ddmin(rules(1000), test)
	assert.Equal(t, ShrinkBudget, res)
	assert.Less(t, len(got), 1000)
	assert.True(t, slices.ContainsFunc(got, func(r transport.Rule) bool { return r.Call == 500 }), "the set kept still fails")
}

// C5: when the drawn faults, replayed as rules, do not fail the same way,
// shrinking says so, keeps the drawn set, and the report stays the seed's
// own run.
func TestC5_ShrinkSaysWhenTheReplayDoesNotReproduce(t *testing.T) {
	drawn := rules(3)
	f := &Failing{Seed: 9, Violations: []Violation{{Seed: 9, Kind: KindLinearizability, Message: "own"}}, Faults: drawn, Shrunk: drawn, Run: RunSeed}
	replays := 0
	shrink(context.Background(), f, Options{ShrinkTime: time.Minute}, time.Now, func([]transport.Rule, checkMode) ([]Violation, bool) {
		replays++
		return nil, false // nothing fails
	})
	assert.Equal(t, ShrinkNotReproduced, f.Shrink)
	assert.Equal(t, 1, replays)
	assert.Equal(t, drawn, f.Shrunk)
	assert.Equal(t, RunSeed, f.Run)
	assert.Equal(t, "own", f.Violations[0].Message)

	// A final replay that does not fail the same way falls back too.
	f = &Failing{Seed: 9, Violations: []Violation{{Seed: 9, Kind: KindLinearizability}}, Faults: drawn, Shrunk: drawn[:1], Run: RunShrunk}
	f.settle([]Violation{{Kind: KindInvariant}})
	assert.Equal(t, RunSeed, f.Run)
	assert.Equal(t, drawn, f.Shrunk)
	assert.Equal(t, ShrinkNotReproduced, f.Shrink)
}

// C5: a fault that needs an earlier fault of its call only to have an
// attempt to strike moves to that attempt: {1:1 lose-request, 1:2
// lose-response}, 1-minimal for ddmin, shrinks to {1:1 lose-response}
// when that still fails; a fault of another call does not move.
func TestC5_ShiftDownMovesAFaultToTheAttemptItNeeds(t *testing.T) {
	lr := func(call, attempt int, f transport.Fault) transport.Rule {
		return transport.Rule{Method: "Pay", Call: call, Attempt: attempt, Fault: f}
	}
	set := []transport.Rule{lr(1, 1, transport.LoseRequest), lr(1, 2, transport.LoseResponse), lr(2, 1, transport.LoseRequest)}
	// The failure needs a lost reply of call 1's first attempt that ran,
	// and call 2's lost request.
	fails := func(rules []transport.Rule) (bool, bool) {
		return slices.Contains(rules, lr(1, 1, transport.LoseResponse)) && slices.Contains(rules, lr(2, 1, transport.LoseRequest)), false
	}
	got, res := shiftDown(set, fails)
	assert.Equal(t, ShrinkDone, res)
	assert.Equal(t, []transport.Rule{lr(1, 1, transport.LoseResponse), lr(2, 1, transport.LoseRequest)}, got)
	_, ok := shiftedSet(set, 2)
	assert.False(t, ok, "call 2 has no later fault to move")
}
