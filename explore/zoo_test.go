package explore_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strategy is one way to search: a name and what it changes in a sweep's
// options. A new strategy (PCT, bounded exhaustive, a fuzz driver) joins
// the zoo's tests and BenchmarkTimeToFind by a line here.
type strategy struct {
	name  string
	apply func(*explore.Options)
}

// strategies are the ways to search the zoo. The first is the default:
// random faults at the default rates, with the default latency.
var strategies = []strategy{
	{name: "random", apply: func(*explore.Options) {}},
	{name: "random-no-latency", apply: func(o *explore.Options) { o.NoLatency = true }},
	{name: "swarm", apply: func(o *explore.Options) { o.Swarm = true }},
	{name: "swarm-no-latency", apply: func(o *explore.Options) { o.Swarm, o.NoLatency = true, true }},
	// PCT orders same-instant tasks, which latency spreads apart: it runs
	// without (see docs/scenarios.md).
	{name: "pct-no-latency", apply: func(o *explore.Options) { o.Strategy, o.NoLatency = runtime.StrategyPCT, true }},
}

// zooOptions are the options of a sweep of bug b under strategy s: the
// bug's own rates, no minimum share of checked histories where its runs
// do background work the check cannot judge, one worker.
func zooOptions(b zoo.Bug, s strategy, first uint64, seeds int) explore.Options {
	o := explore.Options{First: first, Seeds: seeds, Workers: 1, Rates: b.Rates}
	if b.Background {
		o.MinChecked = -1
	}
	s.apply(&o)
	return o
}

// found is how far a search of one bug went: the seeds run up to and with
// the first failing one, and the CPU time they took.
type found struct {
	seeds int
	cpu   time.Duration
	ok    bool
}

// timeToFind runs seeds 1, 2, ... of b's buggy form under s until one
// fails or limit seeds ran, on one worker, in sweeps of growing size
// (the seeds after the failing one in its sweep are not counted in the
// time: the time is read when the failing seed is done).
func timeToFind(tb testing.TB, b zoo.Bug, s strategy, limit int) found {
	tb.Helper()
	start := cpuTime()
	first, chunk := uint64(1), 16
	for first <= uint64(limit) {
		n := min(chunk, limit-int(first)+1)
		o := zooOptions(b, s, first, n)
		o.NoShrink = true
		at := time.Duration(-1)
		o.Progress = func(p explore.Progress) {
			if p.Failed > 0 && at < 0 {
				at = cpuTime() - start
			}
		}
		sum, err := explore.RunFunc(o, b.Buggy)
		require.NoError(tb, err)
		if sum.FirstFailing != nil {
			return found{seeds: int(sum.FirstFailing.Seed), cpu: at, ok: true}
		}
		first += uint64(n)
		chunk = min(chunk*2, 1024)
	}
	return found{seeds: limit, cpu: cpuTime() - start}
}

// TestZoo_FixedFormsExploreClean: every zoo bug's fixed form explores
// clean under every strategy (issue 23).
func TestZoo_FixedFormsExploreClean(t *testing.T) {
	seeds := 700
	if testing.Short() {
		seeds = 200
	}
	for _, b := range zoo.Bugs() {
		for _, s := range strategies {
			t.Run(b.Name+"/"+s.name, func(t *testing.T) {
				o := zooOptions(b, s, 1, seeds)
				o.Workers = 2
				sum, err := explore.RunFunc(o, b.Fixed)
				require.NoError(t, err)
				assert.Empty(t, sum.Violations, "the fixed form of %s must explore clean", b.Name)
				assert.True(t, sum.Whole())
				if !sum.CheckedEnough() {
					t.Logf("%s", sum.NotCheckedEnough())
				}
			})
		}
	}
}

// TestZoo_DefaultStrategyFindsEveryBug: the default strategy finds each
// zoo bug within 10,000 seeds, and the failure it reports is the bug's own
// (its driver's check or the explorer's), shrunk and replayable by seed.
func TestZoo_DefaultStrategyFindsEveryBug(t *testing.T) {
	for _, b := range zoo.Bugs() {
		t.Run(b.Name, func(t *testing.T) {
			f := timeToFind(t, b, strategies[0], 10000)
			require.True(t, f.ok, "the default strategy must find %s within 10,000 seeds", b.Name)
			t.Logf("%s: seed %d, %v CPU", b.Name, f.seeds, f.cpu)
			o := zooOptions(b, strategies[0], uint64(f.seeds), 1)
			sum, err := explore.RunFunc(o, b.Buggy)
			require.NoError(t, err)
			require.NotNil(t, sum.FirstFailing, "seed %d replays its failure", f.seeds)
			assert.Equal(t, uint64(f.seeds), sum.FirstFailing.Seed)
			assert.LessOrEqual(t, len(sum.FirstFailing.Shrunk), len(sum.FirstFailing.Faults), "shrinking keeps a subset")
		})
	}
}

// TestZoo_Table prints the time-to-find table of the README (section
// "Finding bugs") when DOSIM_ZOO_TABLE is set: each strategy on each zoo
// bug, seeds and CPU time to the first failure, at most 10,000 seeds.
func TestZoo_Table(t *testing.T) {
	if os.Getenv("DOSIM_ZOO_TABLE") == "" {
		t.Skip("set DOSIM_ZOO_TABLE=1 to print the time-to-find table")
	}
	var sb strings.Builder
	sb.WriteString("| bug | needs |")
	for _, s := range strategies {
		fmt.Fprintf(&sb, " %s |", s.name)
	}
	sb.WriteString("\n| --- | --- |" + strings.Repeat(" ---: |", len(strategies)) + "\n")
	for _, b := range zoo.Bugs() {
		fmt.Fprintf(&sb, "| `%s` | %s |", b.Name, b.Needs)
		for _, s := range strategies {
			f := timeToFind(t, b, s, 10000)
			if f.ok {
				fmt.Fprintf(&sb, " %d (%s) |", f.seeds, cpuText(f.cpu))
			} else {
				fmt.Fprintf(&sb, " not in %d (%s) |", f.seeds, cpuText(f.cpu))
			}
		}
		sb.WriteString("\n")
	}
	t.Log("\n" + sb.String())
}

func cpuText(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
