package explore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// turnstileCrowd is the zoo's starved-caller bug (examples/zoo): three
// callers that each try a turnstile once a tick, all at the same
// instants, which fails when one of them never got in. The turnstile
// serves first come, first served (fixed: it owes the caller it rejected
// a slot at the next tick), so the random tie-break makes that one chance
// in 3^15 a seed; PCT makes it likely, as the caller of lowest priority
// comes last at every tick until a change point.
func turnstileCrowd(fixed bool) zoo.Driver { return zooDriver(zoo.FoundByPCT, "starved-caller", fixed) }

// turnstileTicks is how many ticks each caller tries at.
const turnstileTicks = zoo.TurnstileTicks

// pctOpts are a PCT sweep of the turnstile: no faults (the bug needs
// none, and a fault that turns a favoured caller away hides it), no
// latency, which would put
// the callers' arrivals at distinct instants, where no scheduler chooses.
func pctOpts(seeds int) explore.Options {
	return explore.Options{Seeds: seeds, NoLatency: true, NoLinearizability: true, Rates: noFaults, Strategy: runtime.StrategyPCT}
}

// TestPCT_FindsAStarvedCaller: the starved caller needs the same caller
// last at every one of 16 ticks, one chance in 3^15 a seed with the random
// tie-break: 10,000 seeds are clean. PCT, depth 3, finds it within 20
// seeds (the caller of lowest priority is last at every tick until a
// change point), with k measured by the calibration run. The fixed form
// explores clean under both.
func TestPCT_FindsAStarvedCaller(t *testing.T) {
	random, err := explore.RunFunc(explore.Options{Seeds: countSeeds(10000), Strategy: runtime.StrategyRandom, NoLatency: true, NoLinearizability: true, Rates: noFaults, Workers: 2}, turnstileCrowd(false))
	require.NoError(t, err)
	assert.True(t, random.Clean(), "the random tie-break misses it: %v", random.Violations)
	assert.Equal(t, explore.Scheduling{}, random.Scheduling)

	pct, err := explore.RunFunc(pctOpts(20), turnstileCrowd(false))
	require.NoError(t, err)
	require.NotNil(t, pct.FirstFailing, "PCT must find the starved caller within 20 seeds")
	assert.Contains(t, pct.FirstFailing.Violations[0].Message, "at all 16 ticks: starved")
	assert.Equal(t, runtime.StrategyPCT, pct.Strategy)
	assert.Equal(t, explore.DefaultDepth, pct.Depth)
	assert.Greater(t, pct.PCTSteps, uint64(3*turnstileTicks), "k: each caller runs a step a tick")
	t.Logf("pct: first failing seed %d, %d of 20 seeds fail, k %d", pct.FirstFailing.Seed, pct.Failed, pct.PCTSteps)

	for _, o := range []explore.Options{pctOpts(1000), {Seeds: 1000, Strategy: runtime.StrategyRandom, NoLatency: true, NoLinearizability: true, Rates: noFaults}} {
		fixed, err := explore.RunFunc(o, turnstileCrowd(true))
		require.NoError(t, err)
		assert.True(t, fixed.Clean(), "%s: the fixed form: %v", fixed.Scheduling, fixed.Violations)
	}
}

// D1 under PCT: the same seed gives the same run, byte for byte
// (CheckDeterminism runs each failing seed and every 64th twice), and two
// sweeps find the same seeds.
func TestPCT_SameSeedSameTrace(t *testing.T) {
	o := pctOpts(200)
	o.CheckDeterminism = true
	a, err := explore.RunFunc(o, turnstileCrowd(false))
	require.NoError(t, err)
	b, err := explore.RunFunc(o, turnstileCrowd(false))
	require.NoError(t, err)
	require.Positive(t, a.Failed)
	for _, v := range a.Violations {
		assert.NotEqual(t, explore.KindNondeterminism, v.Kind, v.Message)
	}
	assert.Equal(t, a.Violations, b.Violations)
	assert.Equal(t, a.Fingerprint, b.Fingerprint)
}

// A failure PCT found replays by its seed, with the same strategy: the
// same violation; the seed's run under the random tie-break is another.
func TestPCT_ReplaysAFailureBySeed(t *testing.T) {
	fe, err := explore.NewFunc(pctOpts(20), turnstileCrowd(false))
	require.NoError(t, err)
	sum, err := fe.SweepContext(context.Background())
	require.NoError(t, err)
	require.NotNil(t, sum.FirstFailing)
	f := sum.FirstFailing
	again := fe.Rerun(&explore.Failing{Seed: f.Seed, Run: explore.RunSeed})
	var b strings.Builder
	require.NoError(t, again.WriteTimeline(&b))
	assert.Contains(t, b.String(), "seed")

	one := pctOpts(1)
	one.First = f.Seed
	replay, err := explore.RunFunc(one, turnstileCrowd(false))
	require.NoError(t, err)
	require.NotNil(t, replay.FirstFailing, "seed %d replays under PCT", f.Seed)
	assert.Equal(t, f.Violations[0].Message, replay.FirstFailing.Violations[0].Message)
	assert.Equal(t, sum.PCTSteps, replay.PCTSteps, "k is measured the same for any seed range")

	random := explore.Options{First: f.Seed, Seeds: 1, Strategy: runtime.StrategyRandom, NoLatency: true, NoLinearizability: true, Rates: noFaults}
	plain, err := explore.RunFunc(random, turnstileCrowd(false))
	require.NoError(t, err)
	assert.True(t, plain.Clean(), "the same seed under the random tie-break is another run")
}

// Shrinking under PCT: a fault-driven bug (a non-idempotent method marked
// Retryable) found by a PCT sweep shrinks to a fault set whose replay,
// under the same strategy, fails too.
func TestPCT_Shrinks(t *testing.T) {
	sum, err := explore.RunFunc(explore.Options{Seeds: 300, Strategy: runtime.StrategyPCT, Depth: 2}, counterFunc)
	require.NoError(t, err)
	f := sum.FirstFailing
	require.NotNil(t, f)
	assert.Equal(t, 2, sum.Depth)
	assert.Equal(t, explore.RunShrunk, f.Run, "the shrunk faults replay the failure: %s", f.Shrink)
	assert.NotEmpty(t, f.Shrunk)
	assert.LessOrEqual(t, len(f.Shrunk), len(f.Faults))
	assert.NotEmpty(t, f.Violations)
}

// Bad strategies and depths are refused, naming the field and what is
// allowed.
func TestPCT_BadOptions(t *testing.T) {
	for _, bad := range []struct {
		o    explore.Options
		want string
	}{
		{explore.Options{Seeds: 1, Strategy: "chess"}, "Strategy chess: want mix, random, swarm or pct"},
		{explore.Options{Seeds: 1, Strategy: runtime.StrategyPCT, Depth: 11}, "Depth 11: want 1 to 10"},
		{explore.Options{Seeds: 1, Strategy: runtime.StrategyPCT, Depth: -1}, "Depth -1: want 1 to 10"},
		{explore.Options{Seeds: 1, Strategy: runtime.StrategyRandom, Depth: 3}, "Depth 3 with Strategy random: only pct and mix take a depth"},
		{explore.Options{Seeds: 1, Strategy: runtime.StrategyMix, Depth: 11}, "Depth 11: want 1 to 10"},
		{explore.Options{Seeds: 1, Strategy: runtime.StrategyMix, Swarm: true}, "Swarm with Strategy mix"},
		{explore.Options{Strategy: runtime.StrategyMix, Exhaustive: true}, "Strategy mix with Exhaustive"},
	} {
		_, err := explore.RunFunc(bad.o, turnstileCrowd(true))
		require.ErrorIs(t, err, explore.ErrOptions)
		assert.Contains(t, err.Error(), bad.want)
	}
}

// A PCT sweep's summary records the strategy: in its JSON, in its
// fingerprint and in its replay command; merge refuses shards of another
// strategy or depth.
func TestPCT_SummaryRecordsTheStrategy(t *testing.T) {
	sc := load(t, "ambiguous-delivery")
	shard := func(i int, o explore.Options) *explore.Summary {
		o.Seeds, o.Shard = 20, explore.Shard{Index: i, Count: 2}
		sum, err := explore.Run(sc, o)
		require.NoError(t, err)
		return sum
	}
	pct := explore.Options{Strategy: runtime.StrategyPCT}
	a, b := shard(0, pct), shard(1, pct)
	assert.Equal(t, a.Scheduling, b.Scheduling, "every shard measures the same k")
	var js strings.Builder
	require.NoError(t, a.WriteJSON(&js))
	assert.Contains(t, js.String(), `"strategy": "pct"`)
	assert.Contains(t, js.String(), `"depth": 3`)
	assert.Contains(t, a.ReplayCommand(7), " --strategy pct --depth 3")
	merged, err := explore.Merge(a, b)
	require.NoError(t, err)
	assert.Equal(t, a.Scheduling, merged.Scheduling)

	_, err = explore.Merge(a, shard(1, explore.Options{NoLatency: true})) // mix, PCT's latency
	require.ErrorIs(t, err, explore.ErrMerge)
	assert.Contains(t, err.Error(), "strategy")
	_, err = explore.Merge(a, shard(1, explore.Options{Strategy: runtime.StrategyPCT, Depth: 4}))
	require.ErrorIs(t, err, explore.ErrMerge)

	random := shard(0, explore.Options{Strategy: runtime.StrategyRandom})
	assert.Contains(t, random.ReplayCommand(7), " --strategy random", "the default is mix: a random sweep's replay says random")
	js.Reset()
	require.NoError(t, random.WriteJSON(&js))
	assert.NotContains(t, js.String(), `"strategy"`, "a random sweep leaves summaries as they were")
}
