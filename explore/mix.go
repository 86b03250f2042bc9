package explore

import (
	"fmt"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// SeedStrategy is what one seed of a sweep ran: the random tie-break at
// the sweep's fixed rates, a swarm profile drawn from the seed, or PCT.
type SeedStrategy string

// The strategies a seed may run (SeedStrategyOf).
const (
	SeedRandom SeedStrategy = "random" // fixed rates, the sweep's latency, the random tie-break
	SeedSwarm  SeedStrategy = "swarm"  // the seed's own fault profile and latency spread (transport.Swarm)
	SeedPCT    SeedStrategy = "pct"    // PCT of the sweep's depth; under mix, no latency
)

// The shares, in percent, of the seeds of a mix sweep (runtime.StrategyMix)
// that run each strategy, picked by measurement (TestMix_Shares, whose
// table docs/scenarios.md quotes): the rate at which each strategy alone
// fails each deep bug and each zoo bug gives the seeds a mix of given
// shares is expected to take, 1/(sum of share times rate). The bug found
// least often is the fallback charge, by swarm seeds alone (2.4% of
// them); a starved caller fails 29% of PCT seeds; timing bugs fail most
// seeds with latency (random and swarm seeds). 40/40/20 keeps the slowest
// expected find lowest (about 106 seeds, the fallback charge; 170 at
// 50/25/25) while timing and one-fault bugs stay within about 5 to 18
// seeds.
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
func MixPick(seed uint64) SeedStrategy {
	z := seed ^ mixSalt
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	switch p := z % 100; {
	case p < MixRandomShare:
		return SeedRandom
	case p < MixRandomShare+MixSwarmShare:
		return SeedSwarm
	}
	return SeedPCT
}

// seedRun is how one seed runs: the rates its faults are drawn at, its
// link latency and its schedule.
type seedRun struct {
	strategy SeedStrategy
	swarm    bool // rates and latency are the seed's swarm profile
	rates    transport.Rates
	latency  transport.Latency
	schedule runtime.Schedule
}

// plainRun is the run of a seed of strategy st but its swarm profile:
// PCT's schedule for SeedPCT (without latency under mix, where the
// random seeds have it), else the random tie-break.
func (o *Options) plainRun(s Scheduling, st SeedStrategy) seedRun {
	r := seedRun{strategy: st, rates: o.Rates, latency: o.Latency}
	if st == SeedPCT {
		r.schedule = s.pctSchedule()
		if s.Strategy == runtime.StrategyMix {
			r.latency = transport.Latency{}
		}
	}
	return r
}

// seedRun is the run of seed in the sweep of scheduling s.
func (o *Options) seedRun(s Scheduling, seed uint64) seedRun {
	st := SeedRandom
	switch s.Strategy {
	case runtime.StrategyMix:
		st = MixPick(seed)
	case runtime.StrategyPCT:
		st = SeedPCT
	}
	plain := st
	if st == SeedSwarm {
		plain = SeedRandom
	}
	r := o.plainRun(s, plain)
	r.strategy = st
	if st == SeedSwarm || o.Swarm {
		r.swarm = true
		r.rates, r.latency = transport.Swarm(seed, o.Rates), transport.SwarmLatency(seed, o.Latency)
	}
	return r
}

// describe fills in what f's seed ran: its strategy under mix, its swarm
// profile when it drew one.
func (r seedRun) describe(f *Failing, s Scheduling) {
	if s.Strategy == runtime.StrategyMix {
		f.Strategy = r.strategy
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
		case SeedSwarm:
			swarm, sched = true, Scheduling{}
		case SeedPCT:
			latency, sched.Strategy = transport.Latency{}, runtime.StrategyPCT
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

// pctIndex is the index of r's fixed run options (Explorer.fixed).
func pctIndex(r seedRun) int {
	if r.strategy == SeedPCT {
		return 1
	}
	return 0
}
