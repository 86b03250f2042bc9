package explore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
	"github.com/dosim/dosim/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// builtIns registers dosim's built-in classes, as cmd/dosim does.
var builtIns = scenario.WithBuiltInClasses(examples.Constructors())

func load(t testing.TB, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("..", "testdata", "scenarios", name+".yaml"), builtIns)
	require.NoError(t, err)
	return sc
}

// Planted bug 1: an inventory whose AddOne is marked Retryable. A lost
// reply then adds two.
type markedAddOne struct{ object.Object }

func (m markedAddOne) Methods() object.Methods {
	ms := m.Object.Methods()
	ms["AddOne"] = object.Retryable(ms["AddOne"].Fn())
	return ms
}

func newMarkedAddOne(st *object.State) object.Object {
	return markedAddOne{examples.NewInventory(st)}
}

// Planted bug 2: a ledger whose Transfer forgets its idempotency key but is
// still marked Retryable. A lost reply then moves the money twice.
type keylessLedger struct {
	object.Object
	st *object.State
}

func (l keylessLedger) Methods() object.Methods {
	ms := l.Object.Methods()
	ms["Transfer"] = object.Retryable(l.Transfer)
	return ms
}

func (l keylessLedger) Transfer(ctx context.Context, key, from, to string, amount int) error {
	s := l.st.Storage()
	var a, b int
	if _, err := s.Get(ctx, "balance/"+from, &a); err != nil {
		return err
	}
	if a < amount {
		return fmt.Errorf("transfer %s: %s has %d, cannot send %d", key, from, a, amount)
	}
	if _, err := s.Get(ctx, "balance/"+to, &b); err != nil {
		return err
	}
	if err := s.Put(ctx, "balance/"+from, a-amount); err != nil {
		return err
	}
	return s.Put(ctx, "balance/"+to, b+amount) // the key is never recorded
}

func newKeylessLedger(st *object.State) object.Object {
	return keylessLedger{Object: examples.NewLedger(st), st: st}
}

// Planted bugs are found by the verifier and by the explorer within 1,000
// seeds, and each failing seed replays exactly.
func TestPlantedBugsAreFound(t *testing.T) {
	tests := []struct {
		name, scenario, namespace, method string
		args                              []any
		ctor                              runtime.Constructor
	}{
		{"AddOne marked Retryable", "ambiguous-delivery", "INVENTORY", "AddOne", []any{"apple"}, newMarkedAddOne},
		{"ledger without its idempotency key", "ledger-transfers", "BANK", "Transfer", []any{"t-1", "alice", "bob", 30}, newKeylessLedger},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := runtime.New()
			defer rt.Close()
			ns := rt.Namespace(tc.namespace, tc.ctor)
			rep, err := verify.Idempotent(ns, tc.method, tc.args, verify.Options{Snapshot: map[string]any{"balance/alice": 100}})
			require.NoError(t, err)
			assert.Equal(t, verify.VerdictDanger, rep.Verdict, "the verifier flags it:\n%s", rep.Diff)

			sc := load(t, tc.scenario)
			sum, err := explore.Run(sc, explore.Options{Seeds: 1000, Classes: map[string]runtime.Constructor{tc.namespace: tc.ctor}})
			require.NoError(t, err)
			require.False(t, sum.Clean(), "the explorer finds it within 1,000 seeds")
			f := sum.FirstFailing
			require.NotNil(t, f)
			assert.Equal(t, sum.Violations[0].Seed, f.Seed, "the first failing seed is kept")
			assert.Equal(t, explore.KindLinearizability, f.Violations[0].Kind)
			assert.NotEmpty(t, f.Shrunk)
			assert.LessOrEqual(t, len(f.Shrunk), len(f.Faults), "shrinking never grows the fault set")
			after := 0
			for _, r := range f.Shrunk {
				if slices.Contains([]transport.Fault{transport.LoseResponse, transport.LoseWhileRunning, transport.FailAfterDelivery}, r.Fault) {
					after++
				}
			}
			assert.Positive(t, after, "what remains holds a fault after delivery, the one that ran the method twice: %v", f.Shrunk)
		})
	}
}

// The correct classes pass 10,000 seeds (1,000 under the race detector:
// make test runs the 10,000 without it, see countSeeds).
func TestCorrectClassesPass10000Seeds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 10,000 seeds per scenario; the planted-bug test still runs")
	}
	seeds := countSeeds(10_000)
	for _, name := range []string{"ambiguous-delivery", "ledger-transfers", "concurrent-shops"} {
		sum, err := explore.Run(load(t, name), explore.Options{Seeds: seeds, Workers: 2})
		require.NoError(t, err)
		assert.True(t, sum.Clean(), "%s: %v", name, sum.Violations)
		assert.Equal(t, seeds, sum.Ran)
		assert.Positive(t, sum.Histories)
	}
}

// The same seed explored twice gives the same verdict and the same
// artifacts, byte for byte (D1).
func TestSameSeedSameVerdictD1(t *testing.T) {
	sc := load(t, "ambiguous-delivery")
	opts := explore.Options{Seeds: 300, Classes: map[string]runtime.Constructor{"INVENTORY": newMarkedAddOne}}
	a, err := explore.Run(sc, opts)
	require.NoError(t, err)
	opts.Workers = 2
	b, err := explore.Run(sc, opts)
	require.NoError(t, err)
	var ja, jb bytes.Buffer
	require.NoError(t, a.WriteJSON(&ja))
	require.NoError(t, b.WriteJSON(&jb))
	assert.Equal(t, ja.String(), jb.String(), "one worker or two, the summary is the same")
	require.NotNil(t, a.FirstFailing)

	e, err := explore.New(sc, opts)
	require.NoError(t, err)
	read := func(dir string) map[string]string {
		files, err := e.WriteArtifacts(dir, a.FirstFailing)
		require.NoError(t, err)
		out := map[string]string{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			out[filepath.Base(f)] = string(b)
		}
		return out
	}
	first, second := read(t.TempDir()), read(t.TempDir())
	assert.Equal(t, first, second)
	for _, name := range []string{"timeline.html", "trace.json", "linearizability-INVENTORY-shop.html", "faults.yaml", "violations.txt", "replay.txt"} {
		assert.Contains(t, first, name)
	}
	// issue 36: the failing run as a chrome-trace, for Perfetto
	assert.Contains(t, first["trace.json"], `"traceEvents"`)
	assert.Contains(t, first["replay.txt"], fmt.Sprintf("dosim explore ../testdata/scenarios/ambiguous-delivery.yaml --replay %d --rates ", a.FirstFailing.Seed))
	assert.Contains(t, first["faults.yaml"], "faults:\n  rules:\n    - {call: ")

	// The shrunk fault set replays the failure on its own.
	got, err := e.ReplayFaults(a.FirstFailing.Seed, a.FirstFailing.Shrunk)
	require.NoError(t, err)
	assert.NotEmpty(t, got.Violations)
}

// Shards split a sweep; Merge puts them back together into the same
// report a single sweep gives.
func TestShardsMerge(t *testing.T) {
	sc := load(t, "ambiguous-delivery")
	classes := map[string]runtime.Constructor{"INVENTORY": newMarkedAddOne}
	whole, err := explore.Run(sc, explore.Options{Seeds: 200, Classes: classes})
	require.NoError(t, err)
	parts := shardsViaJSON(t, sc, explore.Options{Seeds: 200, Classes: classes}, 3)
	assert.Equal(t, []explore.Shard{{Index: 0, Count: 3}, {Index: 2, Count: 3}}, mustMerge(t, parts[0], parts[2]).Shards)
	assert.Equal(t, []explore.ShardRange{{From: 1, To: 1, Count: 3}}, mustMerge(t, parts[0], parts[2]).Missing())
	merged := mustMerge(t, parts[2], parts[0], parts[1])
	assert.Empty(t, merged.Missing())
	assert.Equal(t, whole.Ran, merged.Ran)
	assert.Equal(t, whole.Total, merged.Total)
	assert.Equal(t, whole.Violations, merged.Violations)
	assert.Equal(t, whole.FirstFailing.Seed, merged.FirstFailing.Seed)

	_, err = explore.Merge(parts[0], parts[0])
	assert.ErrorContains(t, err, "shard 0/3 appears twice")
	other, err := explore.Run(sc, explore.Options{Seeds: 100, Shard: explore.Shard{Index: 1, Count: 3}})
	require.NoError(t, err)
	_, err = explore.Merge(parts[0], other)
	assert.ErrorContains(t, err, "seeds first+count 1+100, not 1+200")
	_, err = explore.ReadSummary(strings.NewReader(`{"scenario": "x", "bogus": 1}`))
	assert.ErrorIs(t, err, explore.ErrMerge)
}

// shardsViaJSON sweeps sc in n shards, each written as JSON and read back,
// as explore merge reads them.
func shardsViaJSON(t *testing.T, sc *scenario.Scenario, opts explore.Options, n int) []*explore.Summary {
	t.Helper()
	var parts []*explore.Summary
	for i := range n {
		opts.Shard = explore.Shard{Index: i, Count: n}
		s, err := explore.Run(sc, opts)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, s.WriteJSON(&b))
		back, err := explore.ReadSummary(&b)
		require.NoError(t, err)
		parts = append(parts, back)
	}
	return parts
}

func mustMerge(t *testing.T, parts ...*explore.Summary) *explore.Summary {
	t.Helper()
	m, err := explore.Merge(parts...)
	require.NoError(t, err)
	return m
}

func TestBadOptions(t *testing.T) {
	sc := load(t, "ambiguous-delivery")
	tests := []struct {
		opts explore.Options
		want string
	}{
		{explore.Options{Seeds: -1}, "Seeds -1: want 1 or more seeds"},
		{explore.Options{Workers: 1000}, "Workers 1000: want 1 to 256"},
		{explore.Options{Shard: explore.Shard{Index: 3, Count: 3}}, "Shard 3/3: want I/N with 0 <= I < N"},
		{explore.Options{MaxAmbiguous: 50}, "MaxAmbiguous 50: want 1 to 20"},
		{explore.Options{Rates: transport.Rates{transport.LoseRequest: 2}}, "random rate for lose-request is 2, must be between 0 and 1"},
	}
	for _, tc := range tests {
		_, err := explore.Run(sc, tc.opts)
		require.ErrorIs(t, err, explore.ErrOptions)
		assert.Contains(t, err.Error(), tc.want)
	}
	for _, bad := range []string{"1", "3/3", "a/b", "-1/2", "1/2/3"} {
		_, err := explore.ParseShard(bad)
		assert.ErrorIs(t, err, explore.ErrOptions, bad)
	}
	s, err := explore.ParseShard("2/5")
	require.NoError(t, err)
	assert.Equal(t, explore.Shard{Index: 2, Count: 5}, s)
}

// The S-rule invariants are checked on every seed: a class whose method
// is unmarked cannot run twice, so the inventory passes them; what the
// planted bug breaks is linearizability, not an invariant.
func TestInvariantsHoldOnAmbiguousDelivery(t *testing.T) {
	sum, err := explore.Run(load(t, "ambiguous-delivery"), explore.Options{Seeds: 500,
		Rates: transport.Rates{transport.LoseResponse: 0.3, transport.LoseWhileRunning: 0.3}})
	require.NoError(t, err)
	assert.True(t, sum.Clean(), "%v", sum.Violations)
}

// explore.expect expectations are checked on every seed.
func TestExploreExpectations(t *testing.T) {
	src, err := os.ReadFile("../testdata/scenarios/ambiguous-delivery.yaml")
	require.NoError(t, err)
	yaml := string(src) + "explore:\n  random: {lose-request: 0.5}\n  expect:\n    storage:\n      - {stub: shop, key: apple, value: 1}\n"
	sc, err := scenario.Parse("explore-expect.yaml", []byte(yaml), builtIns)
	require.NoError(t, err)
	sum, err := explore.Run(sc, explore.Options{Seeds: 100})
	require.NoError(t, err)
	require.False(t, sum.Clean(), "a lost request can leave the apple absent")
	assert.Equal(t, explore.KindExpectation, sum.Violations[0].Kind)
	assert.Contains(t, sum.Violations[0].Message, "explore.expect.storage[0]")
}
