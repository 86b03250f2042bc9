package scenario

import (
	"slices"

	"github.com/dosim/dosim/internal/optrange"
	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/runtime"
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
	// The ranges are explore's own (internal/optrange); the pairs that
	// cannot go together (a depth with strategy random, swarm with an
	// exhaustive search ...) explore checks once the flags are merged in,
	// naming both fields (rule C11).
	if d, ok := p.ranged(e.depth, "explore.depth", optrange.Depth); ok {
		x.Depth = d
	}
	if on, ok := p.boolean(e.swarm, "explore.swarm"); ok {
		x.Swarm = on
	}
	if on, ok := p.boolean(e.exh, "explore.exhaustive"); ok {
		x.Exhaustive = on
	}
	if n, ok := p.ranged(e.maxFaults, "explore.max-faults", optrange.MaxFaults); ok {
		x.MaxFaults = n
	}
}

// ranged reads an integer option of explore in the range r, in the words
// the flag's error uses.
func (p *parser) ranged(x val[int64], path string, r optrange.Int) (int, bool) {
	if x.n == nil {
		return 0, false
	}
	rn := resolve(x.n)
	if !x.ok {
		p.errorf(rn, path, nil, "is %s: want %s", kindName(rn), r.Want)
		return 0, false
	}
	if x.v < int64(r.Min) || x.v > int64(r.Max) {
		p.errorf(rn, path, nil, "%d is out of range: want %s", x.v, r.Want)
		return 0, false
	}
	return int(x.v), true
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
