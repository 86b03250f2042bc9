package dosimtest

import (
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// Options are the options of a test's search that a test of a class sets,
// so that it need not import package explore: Func, Fuzz, Input and
// Scenario take them, or explore.Options for every other (Sweep says
// which). The zero value is the explorer's default: seeds 1 to 1,000,
// every fault kind at the default rates, the mix strategy.
type Options struct {
	// Seeds is how many seeds to run (default 1000), from First
	// (default 1).
	Seeds int
	First uint64
	// Rates are the random fault rates (nil: explore.DefaultRates, every
	// fault kind).
	Rates transport.Rates
	// Strategy is how the search runs (runtime.StrategyMix, the default;
	// StrategyRandom, StrategySwarm or StrategyPCT), and Depth PCT's
	// depth (0: the default, or a mix seed's own draw).
	Strategy runtime.Strategy
	Depth    int
	// Exhaustive runs every placement of up to MaxFaults faults instead
	// of seeds (explore.Options.Exhaustive).
	Exhaustive bool
	MaxFaults  int
	// Interleaving names the turns meant to interleave at their awaits
	// (explore.Options.Interleaving).
	Interleaving []string
	// FailFast stops the search at its first failing seed.
	FailFast bool
}

// Sweep is what Func, Fuzz, Input and Scenario take: Options, or
// explore.Options for every option the explorer has.
type Sweep interface {
	Options | explore.Options
}

// Explore returns o as explore.Options.
func (o Options) Explore() explore.Options {
	e := explore.Options{Seeds: o.Seeds, First: o.First, Rates: o.Rates, Strategy: o.Strategy, Depth: o.Depth,
		Exhaustive: o.Exhaustive, MaxFaults: o.MaxFaults, Interleaving: o.Interleaving, FailFast: o.FailFast}
	if o.Strategy == runtime.StrategySwarm {
		e.Strategy, e.Swarm = runtime.StrategyRandom, true
	}
	return e
}

// exploreOptions is opts as explore.Options.
func exploreOptions[O Sweep](opts O) explore.Options {
	switch o := any(opts).(type) {
	case Options:
		return o.Explore()
	case explore.Options:
		return o
	}
	panic("unreachable: Sweep is Options or explore.Options")
}
