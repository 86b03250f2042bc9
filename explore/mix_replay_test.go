package explore_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shares are what mix.go says: over 10,000 seeds MixPick gives each
// strategy its share within one point, from the seed alone.
func TestMix_PickIsTheSharesFromTheSeed(t *testing.T) {
	n := map[runtime.Strategy]int{}
	for seed := uint64(1); seed <= 10000; seed++ {
		n[explore.MixPick(seed)]++
		assert.Equal(t, explore.MixPick(seed), explore.MixPick(seed))
	}
	assert.InDelta(t, explore.MixRandomShare*100, n[runtime.StrategyRandom], 100)
	assert.InDelta(t, explore.MixSwarmShare*100, n[runtime.StrategySwarm], 100)
	assert.InDelta(t, explore.MixPCTShare*100, n[runtime.StrategyPCT], 100)
}

// concrete is the sweep that runs seed as the mix does: the strategy it
// drew, alone, at the PCT depth it drew (the flags its replay command
// carries).
func concrete(o explore.Options, seed uint64) explore.Options {
	switch explore.MixPick(seed) {
	case runtime.StrategySwarm:
		o.Strategy, o.Swarm = runtime.StrategyRandom, true
	case runtime.StrategyPCT:
		o.Strategy, o.NoLatency, o.Depth = runtime.StrategyPCT, true, explore.MixDepth(seed)
	default:
		o.Strategy = runtime.StrategyRandom
	}
	return o
}

// D1 under mix: a mix seed's run is, byte for byte, the run of the
// strategy it drew (so its replay command replays it), and twice the
// same; over seeds that drew each of the three.
func TestMix_ASeedRunsAsItsStrategyByteForByte(t *testing.T) {
	sc := load(t, "setquantity-overwrites-addone")
	mix, err := explore.New(sc, explore.Options{Seeds: 1})
	require.NoError(t, err)
	seen := map[runtime.Strategy]bool{}
	for seed := uint64(1); seed <= 12; seed++ {
		seen[explore.MixPick(seed)] = true
		a, err := mix.Replay(seed)
		require.NoError(t, err)
		b, err := mix.Replay(seed)
		require.NoError(t, err)
		one, err := explore.New(sc, concrete(explore.Options{Seeds: 1}, seed))
		require.NoError(t, err)
		c, err := one.Replay(seed)
		require.NoError(t, err)
		assert.Equal(t, a.Result.Trace(), b.Result.Trace(), "seed %d twice", seed)
		assert.Equal(t, a.Result.Trace(), c.Result.Trace(), "seed %d under mix and under %s alone", seed, explore.MixPick(seed))
		assert.Equal(t, a.Violations, c.Violations)
	}
	assert.Len(t, seen, 3, "the seeds drew every strategy")

	fe, err := explore.NewFunc(explore.Options{Seeds: 1, NoLinearizability: true, Rates: noFaults}, turnstileCrowd(false))
	require.NoError(t, err)
	for seed := uint64(1); seed <= 12; seed++ {
		one, err := explore.NewFunc(concrete(explore.Options{Seeds: 1, NoLinearizability: true, Rates: noFaults}, seed), turnstileCrowd(false))
		require.NoError(t, err)
		got, want := fe.RunInput(explore.Input{Seed: seed}).Trace(), one.RunInput(explore.Input{Seed: seed}).Trace()
		assert.Equal(t, want, got, "seed %d (%s)", seed, explore.MixPick(seed))
	}
}

// A failure mix found says which strategy its seed ran, and its replay
// command carries that strategy's flags; the seed replays under mix and
// under those flags, with the same violation. PCT's k is measured once
// per sweep, at PCT's latency (none): the same k as a PCT sweep's.
func TestMix_ReportsAndReplaysTheSeedsStrategy(t *testing.T) {
	var runs atomic.Int64
	fn := turnstileCrowd(false)
	counted := explore.Options{Seeds: 40, NoLinearizability: true, Rates: noFaults, NoShrink: true}
	sum, err := explore.RunFunc(counted, func(ctx context.Context, rt *runtime.Runtime) error { runs.Add(1); return fn(ctx, rt) })
	require.NoError(t, err)
	require.NotNil(t, sum.FirstFailing, "mix finds the starved caller within 40 seeds")
	f := sum.FirstFailing
	assert.Equal(t, runtime.StrategyMix, sum.Strategy)
	assert.Equal(t, runtime.StrategyPCT, f.Strategy, "only PCT starves a caller")
	assert.Nil(t, f.Profile)
	assert.Equal(t, int64(40+1+1), runs.Load(), "the seeds, one calibration run, one replay of the failing seed")
	assert.Contains(t, sum.ReplayCommand(f.Seed), fmt.Sprintf("explore.Options{First: %d, Seeds: 1, ...the sweep's other options}", f.Seed), "the same options replay the seed: it draws its strategy again (cli.TestPCT_ExploreFlagSaysItAndReplays checks dosim's line)")
	assert.Contains(t, sum.Scheduling.String(), "mix (each seed draws its own: random=40%,swarm=40%,pct=20%")

	pct, err := explore.RunFunc(explore.Options{First: f.Seed, Seeds: 1, Strategy: runtime.StrategyPCT, NoLinearizability: true, Rates: noFaults}, fn)
	require.NoError(t, err)
	assert.Equal(t, sum.PCTSteps, pct.PCTSteps, "one k for both")
	require.NotNil(t, pct.FirstFailing, "seed %d replays under pct alone", f.Seed)
	assert.Equal(t, f.Violations[0].Message, pct.FirstFailing.Violations[0].Message)

	again, err := explore.RunFunc(explore.Options{First: f.Seed, Seeds: 1, NoLinearizability: true, Rates: noFaults}, fn)
	require.NoError(t, err)
	require.NotNil(t, again.FirstFailing, "and under mix")
	assert.Equal(t, f.Violations, again.FirstFailing.Violations)

	swarm, err := explore.RunFunc(explore.Options{Seeds: 1000, NoLinearizability: true, NoShrink: true}, chargeWithFallback)
	require.NoError(t, err)
	require.NotNil(t, swarm.FirstFailing)
	assert.Equal(t, runtime.StrategySwarm, swarm.FirstFailing.Strategy)
	assert.Equal(t, rateNames(transport.Swarm(swarm.FirstFailing.Seed, explore.DefaultRates())), swarm.FirstFailing.Profile, "a swarm seed's profile is reported")
}

// Rule 3 of issue 23: PCT alone runs without latency unless latency is
// asked for (Latency, or the scenario's explore.latency); mix's PCT seeds
// always do.
func TestMix_PCTLatencyIsOffByDefault(t *testing.T) {
	sc := load(t, "ambiguous-delivery")
	e, err := explore.New(sc, explore.Options{Strategy: runtime.StrategyPCT})
	require.NoError(t, err)
	assert.Equal(t, transport.Latency{}, e.Options().Latency)
	l := transport.Latency{P50: 1e6, P99: 9e6}
	e, err = explore.New(sc, explore.Options{Strategy: runtime.StrategyPCT, Latency: l})
	require.NoError(t, err)
	assert.Equal(t, l, e.Options().Latency, "an explicit latency applies")
	sc.Explore.Latency = &l
	e, err = explore.New(sc, explore.Options{Strategy: runtime.StrategyPCT})
	require.NoError(t, err)
	assert.Equal(t, l, e.Options().Latency, "so does the scenario's explore.latency")
	e, err = explore.New(load(t, "ambiguous-delivery"), explore.Options{})
	require.NoError(t, err)
	assert.Equal(t, explore.DefaultLatency, e.Options().Latency, "mix keeps latency for its random and swarm seeds")
	assert.Equal(t, runtime.StrategyMix, e.Options().Strategy)
}

// The scenario's explore block names the strategy (scenario.Explore);
// options that name one override it.
func TestMix_ScenarioStrategyFieldsAndOverrides(t *testing.T) {
	opts := func(edit func(*explore.Options), file func(*scenario.Explore)) explore.Options {
		sc := load(t, "ambiguous-delivery")
		file(&sc.Explore)
		o := explore.Options{}
		edit(&o)
		e, err := explore.New(sc, o)
		require.NoError(t, err)
		return e.Options()
	}
	none := func(*explore.Options) {}
	o := opts(none, func(x *scenario.Explore) { x.Strategy, x.Depth = runtime.StrategyPCT, 4 })
	assert.Equal(t, runtime.StrategyPCT, o.Strategy)
	assert.Equal(t, 4, o.Depth)
	o = opts(func(o *explore.Options) { o.Strategy = runtime.StrategyRandom }, func(x *scenario.Explore) { x.Strategy, x.Depth = runtime.StrategyPCT, 4 })
	assert.Equal(t, runtime.Strategy(""), o.Strategy, "the options' random replaces the file's pct and its depth")
	assert.Zero(t, o.Depth)
	o = opts(none, func(x *scenario.Explore) { x.Swarm = true })
	assert.True(t, o.Swarm)
	assert.Equal(t, runtime.Strategy(""), o.Strategy, "swarm on every seed is the random strategy")
	o = opts(func(o *explore.Options) { o.Strategy = runtime.StrategyMix }, func(x *scenario.Explore) { x.Swarm = true })
	assert.False(t, o.Swarm, "an explicit strategy replaces the file's swarm")
	o = opts(none, func(x *scenario.Explore) { x.Exhaustive, x.MaxFaults = true, 1 })
	assert.True(t, o.Exhaustive)
	assert.Equal(t, 1, o.MaxFaults)
	o = opts(func(o *explore.Options) { o.Seeds = 10 }, func(x *scenario.Explore) { x.Exhaustive, x.MaxFaults = true, 1 })
	assert.False(t, o.Exhaustive, "a seed count asks for a sweep of seeds")
	assert.Equal(t, 10, o.Seeds)
}

// A mix sweep's summary records the strategy and its shares, in its JSON
// and fingerprint; its shards merge, and merge refuses a shard of
// another strategy. A failing seed's JSON says what it ran.
func TestMix_SummaryRecordsTheMix(t *testing.T) {
	sc := load(t, "setquantity-overwrites-addone")
	shard := func(i int, o explore.Options) *explore.Summary {
		o.Seeds, o.Shard, o.NoShrink = 20, explore.Shard{Index: i, Count: 2}, true
		sum, err := explore.Run(sc, o)
		require.NoError(t, err)
		return sum
	}
	a, b := shard(0, explore.Options{}), shard(1, explore.Options{})
	assert.Equal(t, a.Scheduling, b.Scheduling, "every shard measures the same k")
	var js strings.Builder
	require.NoError(t, a.WriteJSON(&js))
	assert.Contains(t, js.String(), `"strategy": "mix"`)
	assert.Contains(t, js.String(), `"mix": "random=40%,swarm=40%,pct=20%"`)
	assert.Contains(t, js.String(), `"seedStrategy": "swarm"`, "seed 1 drew swarm")
	back, err := explore.ReadSummary(strings.NewReader(js.String()))
	require.NoError(t, err, "the fingerprint covers the new fields")
	assert.Equal(t, a.Scheduling, back.Scheduling)
	merged, err := explore.Merge(a, b)
	require.NoError(t, err)
	assert.Equal(t, runtime.StrategyMix, merged.Strategy)
	_, err = explore.Merge(a, shard(1, explore.Options{Strategy: runtime.StrategyRandom}))
	require.ErrorIs(t, err, explore.ErrMerge)
	assert.Contains(t, err.Error(), "strategy")
}
