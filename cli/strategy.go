package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/optrange"
	"github.com/dosim/dosim/runtime"
)

// strategyFlags are explore's --strategy and --depth.
type strategyFlags struct {
	strategy string
	depth    int
}

func (s *strategyFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.strategy, "strategy", string(runtime.StrategyMix), "how to search: mix (each seed draws random, swarm or pct from the seed; the default, but with --swarm or --exhaustive), random (fixed rates, a seeded tie-break at every wake-up) or pct (random task priorities with --depth minus 1 change points, Burckhardt et al. ASPLOS'10; latency off unless --latency); the scenario's explore.strategy when not given")
	f.IntVar(&s.depth, "depth", explore.DefaultDepth, fmt.Sprintf("PCT's depth d: %s (with --strategy pct; with mix, each PCT seed draws its own from %d to %d unless given)", optrange.Depth.Want, explore.MixMinDepth, explore.MixMaxDepth))
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
		if f.Strategy == runtime.StrategySwarm {
			head = "it ran swarm, its profile"
		}
		fmt.Fprintf(w, "%s: %s", head, explore.RatesText(f.Profile))
		if f.ProfileLatency != nil {
			fmt.Fprintf(w, ", latency %s", f.ProfileLatency)
		}
		fmt.Fprintln(w)
	}
	switch f.Strategy {
	case runtime.StrategyPCT:
		fmt.Fprintf(w, "it ran pct (depth %d, change points among %d steps), latency off\n", f.Depth, sum.PCTSteps)
	case runtime.StrategyRandom:
		fmt.Fprintf(w, "it ran random (rates %s, latency %s)\n", explore.RatesText(sum.Rates), sum.Latency)
	}
}
