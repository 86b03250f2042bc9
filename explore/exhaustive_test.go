package explore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// purse keeps a total; Add is not marked (it is not idempotent).
type purse struct{ st *object.State }

func newPurse(st *object.State) object.Object { return &purse{st: st} }

func (p *purse) Methods() object.Methods {
	return object.Methods{"Add": object.Func(p.Add), "Total": object.Retryable(p.Total)}
}

func (p *purse) Add(ctx context.Context, n int) (int, error) {
	total, err := p.Total(ctx)
	if err != nil {
		return 0, err
	}
	return total + n, p.st.Storage().Put(ctx, "total", total+n)
}

func (p *purse) Total(ctx context.Context) (int, error) {
	var total int
	_, err := p.st.Storage().Get(ctx, "total", &total)
	return total, err
}

// doubleCompensation is the planted bug that needs two faults at once:
// two payments of 5, each tried once; when both fail, the caller assumes
// neither took effect and pays 10 at once. One lost payment does no harm
// (5 + 5, or 10 alone); two failed payments of which one reached the
// object (lose-while-running, lose-response) pay 15 or 20.
func doubleCompensation(ctx context.Context, rt *runtime.Runtime) error {
	ns := rt.Namespace("PURSE", newPurse)
	pay := func(n, retries int) error {
		s, err := ns.GetByName("p", stub.MaxRetries(retries))
		if err != nil {
			return err
		}
		_, err = stub.CallAs[int](ctx, s, "Add", n)
		return err
	}
	err1, err2 := pay(5, 0), pay(5, 0)
	if err1 != nil && err2 != nil {
		_ = pay(10, 10)
	}
	s, err := ns.GetByName("p", stub.MaxRetries(10))
	if err != nil {
		return err
	}
	if total, err := stub.CallAs[int](ctx, s, "Total"); err == nil && total > 10 {
		return fmt.Errorf("paid %d, more than the 10 owed", total)
	}
	return nil
}

var ambiguousKinds = transport.Rates{transport.LoseResponse: 0.1, transport.LoseWhileRunning: 0.1, transport.NotDelivered: 0.1}

// TestExhaustive_FindsABugThatNeedsTwoFaults: up to one fault the search
// certifies the function clean; up to two it finds the bug, whose two
// faults both stay after shrinking, and the shrunk set replays it.
func TestExhaustive_FindsABugThatNeedsTwoFaults(t *testing.T) {
	one, err := explore.RunFunc(explore.Options{Exhaustive: true, MaxFaults: 1, Rates: ambiguousKinds, NoLatency: true}, doubleCompensation)
	require.NoError(t, err)
	require.True(t, one.Clean(), "%v", one.Violations)
	require.NotNil(t, one.Exhaustive)
	assert.Equal(t, 1+3*3, one.Exhaustive.Runs, "the fault-free run, then its 3 calls x 3 kinds")
	assert.Regexp(t, `^every placement of up to 1 fault over 4 decision points was run: 10 runs, clean \(sha256 [0-9a-f]{16}\)$`, one.Exhaustive.Text("clean"))

	two, err := explore.RunFunc(explore.Options{Exhaustive: true, MaxFaults: 2, Rates: ambiguousKinds, NoLatency: true}, doubleCompensation)
	require.NoError(t, err)
	f := two.FirstFailing
	require.NotNil(t, f, "the search found it")
	assert.False(t, two.Clean())
	assert.Equal(t, explore.KindFunc, f.Violations[0].Kind)
	assert.Regexp(t, `^paid (15|20), more than the 10 owed$`, f.Violations[0].Message)
	assert.Equal(t, explore.ShrinkDone, f.Shrink)
	require.Len(t, f.Shrunk, 2, "neither fault can be dropped")
	reached := 0
	for i, r := range f.Shrunk {
		assert.Equal(t, i+1, r.Call, "the two payments")
		if r.Fault.Reaches() {
			reached++
		}
	}
	assert.Positive(t, reached, "at least one of the failed payments was paid: %v", f.Shrunk)
	assert.Equal(t, explore.RunShrunk, f.Run)

	// The shrunk set replays the failure, as rules, in a runtime of its own.
	rt := runtime.New(runtime.WithSeed(f.Seed), runtime.WithFaults(transport.Plan(f.Shrunk...)))
	defer rt.Close()
	var got error
	require.NoError(t, rt.Run(func(ctx context.Context) error { got = doubleCompensation(ctx, rt); return nil }))
	require.Error(t, got)
	assert.Equal(t, f.Violations[0].Message, got.Error())

	// And so does the explorer's own rerun, which draws its timeline.
	fe, err := explore.NewFunc(explore.Options{Exhaustive: true, MaxFaults: 2, Rates: ambiguousKinds, NoLatency: true}, doubleCompensation)
	require.NoError(t, err)
	var tl bytes.Buffer
	require.NoError(t, fe.Rerun(f).WriteTimeline(&tl))
	assert.Contains(t, tl.String(), "lose-")
}

// TestExhaustive_Deterministic: the same search twice, and on two
// workers, ran the same placements in the same order (the same hash),
// for a function and for a scenario.
func TestExhaustive_Deterministic(t *testing.T) {
	run := func(workers int) *explore.Summary {
		sum, err := explore.RunFunc(explore.Options{Exhaustive: true, MaxFaults: 2, Rates: ambiguousKinds, Workers: workers}, doubleCompensation)
		require.NoError(t, err)
		return sum
	}
	a, b, c := run(1), run(1), run(2)
	assert.Equal(t, a.Exhaustive, b.Exhaustive)
	assert.Equal(t, a.Exhaustive, c.Exhaustive)
	assert.Equal(t, a.FirstFailing, c.FirstFailing)

	sc := load(t, "ambiguous-delivery")
	hashes := map[string]bool{}
	for _, workers := range []int{1, 1, 2} {
		sum, err := explore.Run(sc, explore.Options{Exhaustive: true, MaxFaults: 2, Workers: workers})
		require.NoError(t, err)
		hashes[sum.Exhaustive.Hash] = true
	}
	assert.Len(t, hashes, 1)
}

// TestExhaustive_ScenarioCleanCertificate: a correct scenario is
// certified, its summary carries the certificate through JSON (and its
// fingerprint covers it), and merge refuses an exhaustive search.
func TestExhaustive_ScenarioCleanCertificate(t *testing.T) {
	sum, err := explore.Run(load(t, "ambiguous-delivery"), explore.Options{Exhaustive: true, MaxFaults: 2})
	require.NoError(t, err)
	require.True(t, sum.Clean(), "%v", sum.Violations)
	c := sum.Exhaustive
	assert.Equal(t, 2, c.MaxFaults)
	assert.Equal(t, []string{"not-delivered", "lose-request", "lose-while-running", "lose-response", "overloaded", "fail-after-delivery", "reset", "storage-write-fails"}, c.Kinds, "the default rates' kinds")
	assert.Greater(t, c.Runs, 1+3*8, "more than the root and its 3 points x 8 kinds: retries add points")
	assert.Equal(t, 1, sum.Seeds)
	assert.Equal(t, 1, sum.Ran)

	var b bytes.Buffer
	require.NoError(t, sum.WriteJSON(&b))
	back, err := explore.ReadSummary(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, c, back.Exhaustive)
	edited := bytes.Replace(b.Bytes(), fmt.Appendf(nil, `"runs": %d`, c.Runs), fmt.Appendf(nil, `"runs": %d`, c.Runs+1), 1)
	_, err = explore.ReadSummary(bytes.NewReader(edited))
	assert.ErrorContains(t, err, "fingerprint", "the fingerprint covers the certificate")

	_, err = explore.Merge(back)
	assert.ErrorContains(t, err, "is an exhaustive search: one tree, not shards of a seed range")
}

// TestExhaustive_ScenarioFailureReplays: a planted scenario bug is found
// by the search, its first failing placement replays with its shrunk
// faults, and the replay command carries them.
func TestExhaustive_ScenarioFailureReplays(t *testing.T) {
	sc := load(t, "booth-leaky")
	e, err := explore.New(sc, explore.Options{Exhaustive: true, MaxFaults: 2})
	require.NoError(t, err)
	sum, err := e.Sweep()
	require.NoError(t, err)
	f := sum.FirstFailing
	require.NotNil(t, f)
	require.Len(t, f.Shrunk, 1, "one lost payment charges twice")
	assert.Equal(t, 1, sum.Failed)
	again, err := e.ReplayFaults(f.Seed, f.Shrunk)
	require.NoError(t, err)
	require.NotEmpty(t, again.Violations)
	assert.Equal(t, f.Violations[0].Kind, again.Violations[0].Kind)
	assert.Contains(t, sum.ReplayCommand(f.Seed), "--replay 1 --replay-faults "+explore.FaultSetText(f.Shrunk)+" --latency ")
	back, err := explore.ParseFaultSet(explore.FaultSetText(f.Shrunk))
	require.NoError(t, err)
	assert.Equal(t, f.Shrunk, back)
}

// TestExhaustive_BadOptions: each bound and each option that does not go
// with an exhaustive search is refused, naming it.
func TestExhaustive_BadOptions(t *testing.T) {
	sc := load(t, "ambiguous-delivery")
	for _, c := range []struct {
		opts explore.Options
		want string
	}{
		{explore.Options{Exhaustive: true, MaxFaults: 5}, "MaxFaults 5: want 1 to 4 faults per placement"},
		{explore.Options{Exhaustive: true, MaxFaults: -1}, "MaxFaults -1: want 1 to 4"},
		{explore.Options{MaxFaults: 2}, "MaxFaults 2 without Exhaustive: it bounds an exhaustive search only"},
		{explore.Options{MaxRuns: 10}, "MaxRuns 10 without Exhaustive"},
		{explore.Options{Exhaustive: true, MaxRuns: -1}, "MaxRuns -1: want 1 or more runs"},
		{explore.Options{Exhaustive: true, Seeds: 100}, "Seeds 100 with Exhaustive: an exhaustive search runs the tree of one seed"},
		{explore.Options{Exhaustive: true, Swarm: true}, "Swarm with Exhaustive"},
		{explore.Options{Exhaustive: true, KeepRules: true}, "KeepRules with Exhaustive"},
		{explore.Options{Exhaustive: true, Shard: explore.Shard{Index: 1, Count: 2}}, "Shard 1/2 with Exhaustive"},
		{explore.Options{Exhaustive: true, CheckDeterminism: true}, "CheckDeterminism with Exhaustive"},
	} {
		_, err := explore.New(sc, c.opts)
		assert.ErrorIs(t, err, explore.ErrOptions, c.want)
		assert.ErrorContains(t, err, c.want)
	}
	// A tree over the run limit, before it grows (the fault-free run's
	// points say so) and as it grows.
	_, err := explore.Run(sc, explore.Options{Exhaustive: true, MaxFaults: 3, MaxRuns: 100})
	assert.ErrorIs(t, err, explore.ErrOptions)
	assert.ErrorIs(t, err, explore.ErrSearchTooLarge, "a typed error, not a violation to match by its message")
	assert.ErrorContains(t, err, "max faults (--max-faults) 3: the tree of placements holds about")
	assert.ErrorContains(t, err, "over the limit of 100 (max runs, --max-runs): try --max-faults 2")
	_, err = explore.Run(sc, explore.Options{Exhaustive: true, MaxFaults: 1, MaxRuns: 5})
	assert.ErrorContains(t, err, "over the limit of 5 (max runs, --max-runs): try fewer fault kinds")
	// Rates that name no kind.
	fe, err := explore.NewFunc(explore.Options{Exhaustive: true, Rates: transport.Rates{transport.LoseRequest: 0}}, doubleCompensation)
	require.NoError(t, err)
	_, err = fe.Exhaustive(context.Background())
	assert.ErrorContains(t, err, "name no attempt fault with a rate above 0")
	_, err = fe.SweepContext(context.Background())
	assert.ErrorIs(t, err, explore.ErrOptions, "SweepContext returns the error")
	sum := fe.Sweep() // the deprecated form, kept
	require.Len(t, sum.Violations, 1, "the deprecated Sweep reports the error as a violation")
	assert.Equal(t, explore.KindError, sum.Violations[0].Kind)
	// A fault set that does not parse.
	for _, bad := range []string{"1:1", "x:1=lose-request", "1:0=lose-request", "1:1=nothing", "1:1=lose-request,1:1=overloaded", "1:1=none"} {
		_, err := explore.ParseFaultSet(bad)
		assert.True(t, errors.Is(err, explore.ErrOptions), bad)
	}
}

// tinyScenario is two calls, each through a stub that retries twice.
const tinyScenario = `name: tiny
namespaces:
  INVENTORY: inventory
stubs:
  shop:
    namespace: INVENTORY
    options: {maxRetries: 2}
calls:
  - {stub: shop, method: AddOne, args: [apple]}
  - {stub: shop, method: Get, args: [apple]}
`

// TestExhaustive_ScenarioCountMatchesBruteForce checks a scenario's
// certificate against the test's own count: every subset of at most 3 of
// the six conceivable decision points (three attempts of each call) is
// run with lose-response there, and kept when each of its faults shows in
// its run's records; the kept sets, in the test's own order (by size, then
// call and attempt), hash as the certificate says.
func TestExhaustive_ScenarioCountMatchesBruteForce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tiny.yaml")
	require.NoError(t, os.WriteFile(file, []byte(tinyScenario), 0o644))
	sc, err := scenario.Load(file, builtIns)
	require.NoError(t, err)
	const b = 3
	e, err := explore.New(sc, explore.Options{Exhaustive: true, MaxFaults: b, Rates: transport.Rates{transport.LoseResponse: 0.1}})
	require.NoError(t, err)
	sum, err := e.Sweep()
	require.NoError(t, err)
	require.True(t, sum.Clean(), "%v", sum.Violations)

	methods := []string{"AddOne", "Get"}
	var universe []transport.Rule
	for c := 1; c <= 2; c++ {
		for n := 1; n <= 3; n++ {
			universe = append(universe, transport.Rule{Call: c, Method: methods[c-1], Attempt: n, Fault: transport.LoseResponse})
		}
	}
	var kept [][]transport.Rule
	for mask := range 1 << len(universe) {
		var set []transport.Rule
		for i, r := range universe {
			if mask&(1<<i) != 0 {
				set = append(set, r)
			}
		}
		if len(set) > b {
			continue
		}
		r, err := e.ReplayFaults(1, set)
		require.True(t, err == nil || errors.Is(err, explore.ErrFaultStruckNothing), "%v", err)
		shows := true
		for _, f := range set {
			c := r.Result.Calls[f.Call-1]
			shows = shows && f.Attempt <= len(c.Attempts) && c.Attempts[f.Attempt-1].Fault == f.Fault
		}
		assert.Equal(t, shows, err == nil, "rule C11: a replay refuses a fault set whose faults do not all strike: %s", explore.FaultSetText(set))
		if shows {
			kept = append(kept, set)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool {
		if len(kept[i]) != len(kept[j]) {
			return len(kept[i]) < len(kept[j])
		}
		for k := range kept[i] {
			if a, b := kept[i][k], kept[j][k]; a.Call != b.Call || a.Attempt != b.Attempt {
				return a.Call < b.Call || a.Call == b.Call && a.Attempt < b.Attempt
			}
		}
		return false
	})
	t.Logf("%d placements of up to %d faults: %s", len(kept), b, sum.Exhaustive.Text("clean"))
	assert.Equal(t, len(kept), sum.Exhaustive.Runs)
	assert.Equal(t, explore.PlacementsHash(kept), sum.Exhaustive.Hash)
}

// TestExhaustive_FailsWithNoFault: a function that fails with no fault at
// all fails at the tree's root: the first failing placement is empty, and
// its replay says -dosim.faults=none.
func TestExhaustive_FailsWithNoFault(t *testing.T) {
	broken := func(ctx context.Context, rt *runtime.Runtime) error { return errors.New("always") }
	sum, err := explore.RunFunc(explore.Options{Exhaustive: true, MaxFaults: 2}, broken)
	require.NoError(t, err)
	f := sum.FirstFailing
	require.NotNil(t, f)
	assert.Empty(t, f.Shrunk)
	assert.Equal(t, 1, sum.Exhaustive.Runs, "the search stops at the end of the root's level")
	assert.Contains(t, sum.ReplayCommand(f.Seed), "-dosim.seed=1 -dosim.faults=none)")
}
