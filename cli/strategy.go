package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/runtime"
)

// strategyFlags are explore's --strategy and --depth.
type strategyFlags struct {
	strategy string
	depth    int
}

func (s *strategyFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.strategy, "strategy", string(runtime.StrategyMix), "how to search: mix (each seed draws random, swarm or pct from the seed; the default, but with --swarm or --exhaustive), random (fixed rates, a seeded tie-break at every wake-up) or pct (random task priorities with --depth minus 1 change points, Burckhardt et al. ASPLOS'10; latency off unless --latency); the scenario's explore.strategy when not given")
	f.IntVar(&s.depth, "depth", explore.DefaultDepth, fmt.Sprintf("PCT's depth d, 1 to %d: the ordering constraints a bug may need (with --strategy pct or mix)", runtime.MaxDepth))
}

// options sets the strategy of opts; an error names the flag and what is
// allowed. A flag not given leaves the option to the scenario's explore
// block, else the explorer's default (mix).
func (s *strategyFlags) options(opts *explore.Options, given func(string) bool) error {
	st := runtime.Strategy(s.strategy)
	switch st {
	case runtime.StrategyRandom:
		if given("depth") {
			return usageErrorf("--depth %d: only --strategy pct or mix takes a depth (the strategy is %s)", s.depth, s.strategy)
		}
	case runtime.StrategyPCT, runtime.StrategyMix:
		if s.depth < 1 || s.depth > runtime.MaxDepth {
			return usageErrorf("--depth %d: want 1 to %d (default %d)", s.depth, runtime.MaxDepth, explore.DefaultDepth)
		}
		if st == runtime.StrategyMix && given("strategy") && given("swarm") {
			return usageErrorf("--strategy mix with --swarm: a mix draws a swarm profile for its own share of the seeds; for swarm on every seed, give --strategy random --swarm")
		}
	default:
		return usageErrorf("--strategy %s: want mix, random or pct%s", quote.Q(s.strategy), didYouMean(s.strategy, []string{"mix", "random", "pct"}))
	}
	if given("strategy") {
		opts.Strategy = st
	}
	if given("depth") {
		opts.Depth = s.depth
	}
	return nil
}

// writeStrategy prints the sweep's strategy.
func writeStrategy(w io.Writer, sum *explore.Summary) {
	if sum.Exhaustive == nil {
		fmt.Fprintf(w, "strategy %s\n", sum.Scheduling)
	}
}

// writeSeedStrategy prints what a failing seed ran: its strategy in a
// mix sweep, its profile when it drew a swarm profile.
func writeSeedStrategy(w io.Writer, sum *explore.Summary, f *explore.Failing) {
	if f.Profile != nil {
		head := "its swarm profile"
		if f.Strategy == explore.SeedSwarm {
			head = "it ran swarm, its profile"
		}
		fmt.Fprintf(w, "%s: %s", head, explore.RatesText(f.Profile))
		if f.ProfileLatency != nil {
			fmt.Fprintf(w, ", latency %s", f.ProfileLatency)
		}
		fmt.Fprintln(w)
	}
	switch f.Strategy {
	case explore.SeedPCT:
		fmt.Fprintf(w, "it ran pct (depth %d, change points among %d steps), latency off\n", sum.Depth, sum.PCTSteps)
	case explore.SeedRandom:
		fmt.Fprintf(w, "it ran random (rates %s, latency %s)\n", explore.RatesText(sum.Rates), sum.Latency)
	}
}
