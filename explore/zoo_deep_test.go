package explore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deepBug is what TestZoo_DeepBugs checks of one deep bug beyond the
// common part: how its strategy finds it (a sweep of at most within seeds,
// or runs), and a check of the failure found.
type deepBug struct {
	strategy strategy
	within   int
}

// deepBugs are the zoo's deep bugs by name: the strategy that finds each
// and within how many seeds (an exhaustive search: runs) it must. The
// fuzz bug is not here: Go's fuzzer is not deterministic, so its test
// (TestZoo_FuzzFindsTheFallbackLadder) checks a crafted input instead.
var deepBugs = map[string]deepBug{
	"overtaken-update": {strategy: strategyNamed("random"), within: 100},
	"fallback-charge":  {strategy: strategyNamed("swarm"), within: 200},
	"starved-caller":   {strategy: strategyNamed("pct-no-latency"), within: 20},
	"deposed-leader":   {strategy: pctDepth4, within: 200},
	"batch-resent":     {strategy: strategyNamed("exhaustive-3"), within: 200},
}

// pctDepth4 is PCT at depth 4, without latency: what the deposed leader
// needs (three ordering changes), and mix's PCT seeds draw for a quarter
// of them (MixDepth). The time-to-find table's PCT column is the default
// depth, 3, which misses it.
var pctDepth4 = strategy{name: "pct-depth-4", apply: func(o *explore.Options) {
	o.Strategy, o.Depth, o.NoLatency = runtime.StrategyPCT, 4, true
}}

// strategyNamed is the row of strategies called name.
func strategyNamed(name string) strategy {
	for _, s := range strategies {
		if s.name == name {
			return s
		}
	}
	panic("no strategy " + name)
}

// missSeeds is how many seeds of random fault draws alone a deep bug's
// test runs to show they miss it: 10,000 (the bound), but 300
// under the race detector, which makes each seed some ten times dearer
// and checks the code, not the count (go test without -race checks the
// 10,000), and 1,000 under -short.
func missSeeds() int {
	switch {
	case raceOn:
		return 300
	case testing.Short():
		return 1000
	}
	return 10000
}

// randomAloneMisses checks that random fault draws alone (randomAlone)
// miss bug b in missSeeds seeds.
func randomAloneMisses(t *testing.T, b zoo.Bug) {
	t.Helper()
	o := zooOptions(b, randomAlone, 1, missSeeds())
	o.Workers, o.NoShrink = 2, true
	sum, err := explore.RunFunc(o, b.Buggy)
	require.NoError(t, err)
	assert.Equal(t, o.Seeds, sum.Ran)
	assert.Empty(t, sum.Violations, "random fault draws alone must miss %s", b.Name)
}

// TestZoo_DeepBugs: each deep zoo bug but the fuzz one (its FoundBy is
// not random) is missed by random fault draws alone (the random
// tie-break, the bug's fixed rates, no latency) within 10,000 seeds, and
// found by its strategy within the seeds (runs) deepBugs says; the
// failure replays by seed (an exhaustive one by its shrunk faults), and
// it shrinks: the shrunk faults are a subset of those drawn and replay
// the failure.
func TestZoo_DeepBugs(t *testing.T) {
	for _, b := range zoo.Bugs() {
		if b.FoundBy == zoo.FoundByRandom || b.FoundBy == zoo.FoundByFuzz {
			continue
		}
		d, ok := deepBugs[b.Name]
		require.True(t, ok, "deep bug %s has no row in deepBugs", b.Name)
		t.Run(b.Name, func(t *testing.T) {
			t.Run("random-alone-misses", func(t *testing.T) { randomAloneMisses(t, b) })
			t.Run(d.strategy.name+"-finds", func(t *testing.T) {
				if d.strategy.exhaustive() {
					exhaustiveFinds(t, b, d)
					return
				}
				seedFinds(t, b, d)
			})
		})
	}
}

// seedFinds: d's strategy finds b within d.within seeds; the seed replays
// the failure, and its shrunk faults do too.
func seedFinds(t *testing.T, b zoo.Bug, d deepBug) {
	f := timeToFind(t, b, d.strategy, d.within)
	require.True(t, f.ok, "%s must find %s within %d seeds", d.strategy.name, b.Name, d.within)
	t.Logf("%s: %s finds it at seed %d", b.Name, d.strategy.name, f.seeds)

	o := zooOptions(b, d.strategy, uint64(f.seeds), 1)
	sum, err := explore.RunFunc(o, b.Buggy)
	require.NoError(t, err)
	ff := sum.FirstFailing
	require.NotNil(t, ff, "seed %d replays its failure", f.seeds)
	assert.Equal(t, uint64(f.seeds), ff.Seed)
	require.NotEmpty(t, ff.Violations)
	assert.Equal(t, explore.ShrinkDone, ff.Shrink)
	assert.LessOrEqual(t, len(ff.Shrunk), len(ff.Faults), "shrinking keeps a subset")
	assert.Equal(t, explore.RunShrunk, ff.Run, "the shrunk faults replay the failure")

	o.NoShrink = true
	again, err := explore.RunFunc(o, b.Buggy)
	require.NoError(t, err)
	require.NotNil(t, again.FirstFailing)
	assert.Equal(t, ff.Faults, again.FirstFailing.Faults, "same seed, same faults")
	assert.Equal(t, ff.Profile, again.FirstFailing.Profile, "and the same profile (swarm)")
}

// exhaustiveFinds: a search of one fault fewer than d's certifies b
// clean, d's finds it within d.within runs with all its faults needed,
// and the shrunk faults replay the failure as rules, in a runtime of
// their own.
func exhaustiveFinds(t *testing.T, b zoo.Bug, d deepBug) {
	o := zooOptions(b, d.strategy, 1, 1)
	fewer := o
	fewer.MaxFaults--
	clean, err := explore.RunFunc(fewer, b.Buggy)
	require.NoError(t, err)
	assert.True(t, clean.Clean(), "up to %d faults: %v", fewer.MaxFaults, clean.Violations)
	t.Logf("%s", clean.Exhaustive.Text("clean"))

	sum, err := explore.RunFunc(o, b.Buggy)
	require.NoError(t, err)
	require.NotNil(t, sum.Exhaustive)
	ff := sum.FirstFailing
	require.NotNil(t, ff, "up to %d faults the search finds %s", o.MaxFaults, b.Name)
	assert.LessOrEqual(t, sum.Exhaustive.Runs, d.within)
	t.Logf("%s: %s finds it in %d runs", b.Name, d.strategy.name, sum.Exhaustive.Runs)
	assert.Equal(t, explore.ShrinkDone, ff.Shrink)
	assert.Len(t, ff.Shrunk, o.MaxFaults, "no fault can be dropped")
	assert.Equal(t, explore.RunShrunk, ff.Run)

	rt := runtime.New(runtime.WithSeed(ff.Seed), runtime.WithFaults(transport.Plan(ff.Shrunk...)))
	defer rt.Close()
	var got error
	require.NoError(t, rt.Run(func(ctx context.Context) error { got = b.Buggy(ctx, rt); return nil }))
	require.Error(t, got, "the shrunk faults replay the failure")
	assert.Equal(t, ff.Violations[0].Message, got.Error())
}

// TestZoo_DeepBugsSweptUnderTheirStrategy: each deep bug's fixed form
// explores clean under the strategy that finds the bug, 1,000 seeds
// further than TestZoo_FixedFormsExploreClean's sweep of every strategy
// (which runs fewer seeds of a deep bug: its runs are longer).
func TestZoo_DeepBugsSweptUnderTheirStrategy(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("1,000 seeds per deep bug, a count, not code the race detector checks: run without -short and -race")
	}
	for _, b := range zoo.Bugs() {
		d, ok := deepBugs[b.Name]
		if !ok || d.strategy.exhaustive() {
			continue // not deep, or the fixed sweep ran its whole tree
		}
		t.Run(b.Name, func(t *testing.T) {
			o := zooOptions(b, d.strategy, uint64(fixedSeeds(b))+1, 1000)
			o.Workers = 2
			sum, err := explore.RunFunc(o, b.Fixed)
			require.NoError(t, err)
			assert.Empty(t, sum.Violations)
		})
	}
}

// zooDriver is the buggy (or, with fixed, the fixed) driver of the zoo's
// bug called name, which foundBy must find: the drivers the PCT, swarm
// and latency tests share with the zoo.
func zooDriver(foundBy, name string, fixed bool) zoo.Driver {
	b, ok := zoo.Lookup(name)
	if !ok || b.FoundBy != foundBy {
		panic(fmt.Sprintf("the zoo has no bug %s found by %s", name, foundBy))
	}
	if fixed {
		return b.Fixed
	}
	return b.Buggy
}
