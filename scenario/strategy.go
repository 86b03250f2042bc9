package scenario

import (
	"slices"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/runtime"
)

// maxDepth and maxFaults bound explore.depth and explore.max-faults, as
// the explorer bounds --depth and --max-faults.
const (
	maxDepth  = runtime.MaxDepth
	maxFaults = 4 // explore.MaxExhaustiveFaults, which this package cannot import
)

// exploreStrategies are the values explore.strategy may take.
var exploreStrategies = []string{string(runtime.StrategyMix), string(runtime.StrategyRandom), string(runtime.StrategyPCT)}

// resolveStrategy resolves how explore searches the scenario: its
// strategy, PCT depth, swarm, exhaustive search and its bound.
func (p *parser) resolveStrategy(e *rawExplore) {
	x := &p.s.Explore
	if v, ok := p.str(e.strategy, "explore.strategy"); ok {
		if !slices.Contains(exploreStrategies, v) {
			p.errorf(e.strategy.n, "explore.strategy", nil, "unknown strategy %s%s; allowed are %s (default mix)",
				quote.Q(v), didYouMean(v, exploreStrategies), joinNames(exploreStrategies))
		} else {
			x.Strategy = runtime.Strategy(v)
		}
	}
	if d, ok := p.integer(e.depth, "explore.depth", 1, maxDepth); ok {
		x.Depth = d
		if x.Strategy == runtime.StrategyRandom {
			p.errorf(e.depth.n, "explore.depth", nil, "is %d with strategy random: only pct and mix take a depth (PCT's d)", d)
		}
	}
	if on, ok := p.boolean(e.swarm, "explore.swarm"); ok {
		x.Swarm = on
		if on && x.Strategy == runtime.StrategyMix {
			p.errorf(e.swarm.n, "explore.swarm", nil, "is true with strategy mix: a mix draws a swarm profile for its own share of the seeds; for swarm on every seed, say strategy: random")
		}
	}
	if on, ok := p.boolean(e.exh, "explore.exhaustive"); ok {
		x.Exhaustive = on
		switch {
		case on && x.Swarm:
			p.errorf(e.exh.n, "explore.exhaustive", nil, "is true with swarm: an exhaustive search places every fault kind of the rates itself, it draws no profile")
		case on && x.Strategy == runtime.StrategyMix:
			p.errorf(e.exh.n, "explore.exhaustive", nil, "is true with strategy mix: an exhaustive search runs one seed's tree, there are no seeds to mix; drop the strategy or say random")
		}
	}
	if n, ok := p.integer(e.maxFaults, "explore.max-faults", 1, maxFaults); ok {
		x.MaxFaults = n
	}
}

// joinNames lists names as "a, b or c".
func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			out += " or "
		default:
			out += ", "
		}
		out += n
	}
	return out
}
