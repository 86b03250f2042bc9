package explore

import (
	"context"
	"math/bits"
	"slices"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tally is the smallest class with state: Add is not marked, Get is.
type tally struct{ st *object.State }

func newTally(st *object.State) object.Object { return &tally{st: st} }

func (t *tally) Methods() object.Methods {
	return object.Methods{"Add": object.Func(t.Add), "Get": object.Retryable(t.Get)}
}

func (t *tally) Add(ctx context.Context, n int) (int, error) {
	var total int
	if _, err := t.st.Storage().Get(ctx, "total", &total); err != nil {
		return 0, err
	}
	total += n
	return total, t.st.Storage().Put(ctx, "total", total)
}

func (t *tally) Get(ctx context.Context) (int, error) {
	var total int
	_, err := t.st.Storage().Get(ctx, "total", &total)
	return total, err
}

// twoCalls makes two calls, each through a fresh stub that retries once,
// and ignores their errors: its decision points are at most two attempts
// of each call.
func twoCalls(ctx context.Context, rt *runtime.Runtime) error { return calls(ctx, rt, false) }

// calls makes twoCalls' calls; with stop, a failed first call is the
// last.
func calls(ctx context.Context, rt *runtime.Runtime, stop bool) error {
	ns := rt.Namespace("TALLY", newTally)
	for _, m := range []string{"Add", "Get"} {
		s, err := ns.GetByName("t", stub.MaxRetries(1))
		if err != nil {
			return err
		}
		args := []any{}
		if m == "Add" {
			args = append(args, 1)
		}
		if _, err := stub.CallAs[int](ctx, s, m, args...); err != nil && stop {
			return nil
		}
	}
	return nil
}

// TestExhaustive_CertificateCountsEveryPlacement checks the certificate's
// run count and hash against a count made independently: by brute force,
// every subset of at most b of the four conceivable decision points (two
// attempts of each of the two calls) is run with lose-request there, and
// kept when each of its faults struck an attempt of its run. The counts
// are also the ones worked out by hand: a retry's attempt is there only
// when the first attempt failed.
func TestExhaustive_CertificateCountsEveryPlacement(t *testing.T) {
	methods := []string{"Add", "Get"}
	var universe []transport.Rule
	for c := 1; c <= 2; c++ {
		for n := 1; n <= 2; n++ {
			universe = append(universe, transport.Rule{Call: c, Method: methods[c-1], Attempt: n, Fault: transport.LoseRequest})
		}
	}
	byHand := map[int]int{1: 3, 2: 6, 3: 8, 4: 9} // {}, {1.1}, {2.1}; {1.1,1.2}, {1.1,2.1}, {2.1,2.2}; ...
	for b := 1; b <= 4; b++ {
		fe, err := NewFunc(Options{Exhaustive: true, MaxFaults: b, Rates: transport.Rates{transport.LoseRequest: 0.1}, NoLatency: true}, twoCalls)
		require.NoError(t, err)
		sum, err := fe.SweepContext(context.Background())
		require.NoError(t, err)
		require.NotNil(t, sum.Exhaustive)
		require.True(t, sum.Clean(), "%+v", sum.Violations)

		var placements [][]transport.Rule
		for mask := range 1 << len(universe) {
			if bits.OnesCount(uint(mask)) > b {
				continue
			}
			set := []transport.Rule{}
			for i, r := range universe {
				if mask&(1<<i) != 0 {
					set = append(set, r)
				}
			}
			calls := fe.check(1, slices.Clone(set), checkMode{}, true).report.Calls
			if allStruck(set, calls) {
				placements = append(placements, set)
			}
		}
		slices.SortFunc(placements, comparePlacements)
		assert.Equal(t, byHand[b], len(placements), "b=%d: the brute force", b)
		assert.Equal(t, len(placements), sum.Exhaustive.Runs, "b=%d: the certificate", b)
		assert.Equal(t, PlacementsHash(placements), sum.Exhaustive.Hash, "b=%d: the same sets in the same order", b)
		assert.Equal(t, 4, sum.Exhaustive.Points, "b=%d: a retry is met in the run whose first attempt failed", b)
	}
}

// allStruck is the brute force's own test that every fault of set struck:
// the attempt it names is in the records with that fault.
func allStruck(set []transport.Rule, calls []runtime.CallRecord) bool {
	for _, r := range set {
		if r.Call > len(calls) || r.Attempt > len(calls[r.Call-1].Attempts) || calls[r.Call-1].Attempts[r.Attempt-1].Fault != r.Fault {
			return false
		}
	}
	return true
}

// TestExhaustive_UnstruckFaultIsADuplicate: a fault placed before another
// that ends the run early (the caller stops after an overloaded first call)
// leaves the other's attempt out of the run: {1.1, 2.1}, reached from
// {2.1}'s run, is run once, counted as a duplicate of {1.1} (the same run),
// and not searched further; {1.1}'s run has no second call to add.
func TestExhaustive_UnstruckFaultIsADuplicate(t *testing.T) {
	stopping := func(ctx context.Context, rt *runtime.Runtime) error { return calls(ctx, rt, true) }
	fe, err := NewFunc(Options{Exhaustive: true, MaxFaults: 2, Rates: transport.Rates{transport.Overloaded: 0.1}, NoLatency: true}, stopping)
	require.NoError(t, err)
	sum, err := fe.SweepContext(context.Background())
	require.NoError(t, err)
	c := sum.Exhaustive
	assert.Equal(t, 3, c.Runs, "{}, {1.1}, {2.1}")
	assert.Equal(t, 1, c.Duplicates, "{1.1, 2.1}")
	assert.Equal(t, PlacementsHash([][]transport.Rule{{},
		{{Call: 1, Method: "Add", Attempt: 1, Fault: transport.Overloaded}},
		{{Call: 2, Method: "Get", Attempt: 1, Fault: transport.Overloaded}}}), c.Hash)
}

// TestExhaustive_JournalMovesNothing: a plan that names storage-write-fails
// journals storage writes from the start (rule L7); until the fault
// strikes, the run is the one without it, byte for byte, as the tree's
// completeness needs (exhaustive_tree.go).
func TestExhaustive_JournalMovesNothing(t *testing.T) {
	fe, err := NewFunc(Options{Exhaustive: true, Rates: transport.Rates{transport.StorageWriteFails: 0.1}}, twoCalls)
	require.NoError(t, err)
	plain := fe.check(1, []transport.Rule{}, checkMode{trace: true}, false).trace
	never := []transport.Rule{{Call: 99, Attempt: 1, Fault: transport.StorageWriteFails}} // names the fault, matches no attempt
	journaled := fe.check(1, never, checkMode{trace: true}, false).trace
	require.NotEmpty(t, plain)
	assert.Equal(t, plain, journaled)
	// And a storage-write-fails on Get, which writes nothing, leaves it as it was.
	onGet := []transport.Rule{{Call: 2, Method: "Get", Attempt: 1, Fault: transport.StorageWriteFails}}
	assert.Equal(t, plain, fe.check(1, onGet, checkMode{trace: true}, false).trace)
}
