package explore

import (
	"fmt"

	"github.com/dosim/dosim/internal/splitmix"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// SeedStrategy is what one seed of a sweep ran: runtime.StrategyRandom
// (the random tie-break at the sweep's fixed rates), runtime.StrategySwarm
// (a swarm profile drawn from the seed) or runtime.StrategyPCT. There is
// one strategy type, runtime.Strategy.
//
//go:fix inline
type SeedStrategy = runtime.Strategy

// The strategies a seed may run, by their old names: runtime's Strategy
// constants are the strategies now.
//
//go:fix inline
const SeedRandom = runtime.StrategyRandom

// SeedSwarm is runtime.StrategySwarm.
//
//go:fix inline
const SeedSwarm = runtime.StrategySwarm

// SeedPCT is runtime.StrategyPCT.
//
//go:fix inline
const SeedPCT = runtime.StrategyPCT

// The shares, in percent, of the seeds of a mix sweep (runtime.StrategyMix)
// that run each strategy, picked by measurement (TestMix_Shares, whose
// table docs/scenarios.md quotes): the rate at which each strategy alone
// fails each deep bug and each zoo bug gives the seeds a mix of given
// shares is expected to take, 1/(sum of share times rate). The bug found
// least often is the fallback charge, by swarm seeds alone (0.9% of them
// since the default rates name every fault kind, issue 32; 2.4% before);
// a starved caller fails 29% of PCT seeds; timing bugs fail most seeds
// with latency (random and swarm seeds). 40/40/20 keeps the slowest
// expected find at about 280 seeds (the fallback charge; 30/50/20 would
// take it to 220, at the cost of every timing and one-fault bug) while
// timing and one-fault bugs stay within about 4 to 20 seeds.
const (
	MixRandomShare = 40
	MixSwarmShare  = 40
	MixPCTShare    = 100 - MixRandomShare - MixSwarmShare
)

// mixShares names the shares, as a summary records them (Scheduling.Mix):
// a sweep of other shares is another sweep.
var mixShares = fmt.Sprintf("random=%d%%,swarm=%d%%,pct=%d%%", MixRandomShare, MixSwarmShare, MixPCTShare)

// mixSalt separates the draw of a seed's strategy from every other draw
// made from the seed (the run's own, transport.Swarm's).
const mixSalt = 0x6d69782073656564 // "mix seed"

// MixPick is the strategy seed runs in a mix sweep: a function of the
// seed alone (a splitmix64 hash of it), never of an unseeded source, so
// the seed replays with the same strategy on any machine and shard.
func MixPick(seed uint64) runtime.Strategy {
	return mixShare(splitmix.Hash(seed^mixSalt) % 100)
}

// mixShare is the strategy of the p-th percentile (0 to 99) of a mix's
// seeds, by the shares.
func mixShare(p uint64) runtime.Strategy {
	switch {
	case p < MixRandomShare:
		return runtime.StrategyRandom
	case p < MixRandomShare+MixSwarmShare:
		return runtime.StrategySwarm
	}
	return runtime.StrategyPCT
}

// seedRun is how one seed runs: the rates its faults are drawn at, its
// link latency and its schedule.
type seedRun struct {
	strategy runtime.Strategy
	swarm    bool // rates and latency are the seed's swarm profile
	rates    transport.Rates
	latency  transport.Latency
	schedule runtime.Schedule
}

// plainRun is the run of a seed of strategy st but its swarm profile:
// PCT's schedule of depth for SeedPCT (without latency under mix, where
// the random seeds have it), else the random tie-break.
func (o *Options) plainRun(s Scheduling, st runtime.Strategy, depth int) seedRun {
	r := seedRun{strategy: st, rates: o.Rates, latency: o.Latency}
	if st == runtime.StrategyPCT {
		r.schedule = s.pctSchedule(depth)
		if s.Strategy == runtime.StrategyMix {
			r.latency = transport.Latency{}
		}
	}
	return r
}

// seedRun is the run of seed in the sweep of scheduling s.
func (o *Options) seedRun(s Scheduling, seed uint64) seedRun {
	st := runtime.StrategyRandom
	switch s.Strategy {
	case runtime.StrategyMix:
		st = MixPick(seed)
	case runtime.StrategyPCT:
		st = runtime.StrategyPCT
	}
	return o.runOf(s, seed, st, s.seedDepth(seed))
}

// runOf is the run of seed as strategy st, at PCT depth depth for SeedPCT.
func (o *Options) runOf(s Scheduling, seed uint64, st runtime.Strategy, depth int) seedRun {
	plain := st
	if st == runtime.StrategySwarm {
		plain = runtime.StrategyRandom
	}
	r := o.plainRun(s, plain, depth)
	r.strategy = st
	if st == runtime.StrategySwarm || o.Swarm {
		r.swarm = true
		r.rates, r.latency = transport.Swarm(seed, o.Rates), transport.SwarmLatency(seed, o.Latency)
	}
	return r
}

// inputRun is the run of a fuzz input of seed whose tie bytes are ties
// (rule C9): in a mix sweep the first byte picks the input's strategy, by
// the mix's shares, and, for PCT in a mix that names no depth, the next
// its depth (MixMinDepth to MixMaxDepth); the bytes after them are the
// scheduler's draws (PCT's priorities and change points, tie-breaks),
// returned as rest. So the fuzzer's bytes, not its seed, steer the
// strategy's decisions, prefix-stable. Without tie bytes, or outside a
// mix, it is the seed's own run and rest is ties.
func (o *Options) inputRun(s Scheduling, seed uint64, ties []byte) (r seedRun, rest []byte) {
	if s.Strategy != runtime.StrategyMix || len(ties) == 0 {
		return o.seedRun(s, seed), ties
	}
	st, rest := mixShare(uint64(ties[0])*100/256), ties[1:]
	depth := s.seedDepth(seed)
	if st == runtime.StrategyPCT && s.Depth == 0 && len(rest) > 0 {
		depth, rest = MixMinDepth+int(rest[0])%(MixMaxDepth-MixMinDepth+1), rest[1:]
	}
	return o.runOf(s, seed, st, depth), rest
}

// describe fills in what f's seed ran: its strategy under mix, its swarm
// profile when it drew one.
func (r seedRun) describe(f *Failing, s Scheduling) {
	if s.Strategy == runtime.StrategyMix {
		f.Strategy = r.strategy
	}
	if r.strategy == runtime.StrategyPCT {
		f.Depth = r.schedule.Depth
	}
	if r.swarm {
		f.Profile, f.ProfileLatency = rateNames(r.rates), ptr(r.latency)
	}
}

// seedFlags are the dosim explore flags that run seed as the sweep ran
// it, for a replay command: its latency, swarm and strategy. A mix
// sweep's seed replays with the flags of the strategy it drew (a mix
// seed's run is that strategy's run of the seed, its k measured alike).
func (s *Summary) seedFlags(seed uint64) string {
	latency, swarm := s.Latency, s.Swarm
	sched := s.Scheduling
	if s.Strategy == runtime.StrategyMix {
		switch MixPick(seed) {
		case runtime.StrategySwarm:
			swarm, sched = true, Scheduling{}
		case runtime.StrategyPCT:
			latency, sched.Strategy, sched.Depth = transport.Latency{}, runtime.StrategyPCT, sched.seedDepth(seed)
		default:
			sched = Scheduling{}
		}
	}
	out := " --latency " + latency.String()
	if swarm {
		out += " --swarm"
	}
	return out + sched.flags()
}

// pctIndex is the index of r's fixed run options (Explorer.fixed): its
// PCT depth, 0 for the random tie-break.
func pctIndex(r seedRun) int {
	if r.strategy == runtime.StrategyPCT {
		return r.schedule.Depth
	}
	return 0
}

// The range of PCT depths a mix sweep's PCT seeds draw from when the
// options name no depth (MixDepth): depth 2 (one change point) to 5 (four
// ordering changes), so that the default search finds bugs that need
// more orderings than the default depth gives, at a quarter of the PCT
// seeds each.
const (
	MixMinDepth = 2
	MixMaxDepth = 5
)

// mixDepthSalt separates the draw of a PCT seed's depth from the draw of
// its strategy.
const mixDepthSalt = 0x6465707468206d78 // "depth mx"

// MixDepth is the PCT depth seed runs at in a mix sweep that names no
// depth: MixMinDepth to MixMaxDepth, a function of the seed alone (as
// MixPick is).
func MixDepth(seed uint64) int {
	z := splitmix.Hash(seed ^ mixDepthSalt)
	return MixMinDepth + int(z%uint64(MixMaxDepth-MixMinDepth+1))
}
