package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
)

// strategyFlags are explore's --strategy and --depth.
type strategyFlags struct {
	strategy string
	depth    int
}

func (s *strategyFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.strategy, "strategy", string(runtime.StrategyRandom), "how the tasks ready at one virtual instant are ordered: random (a seeded draw at every wake-up) or pct (random task priorities with --depth minus 1 change points, Burckhardt et al. ASPLOS'10)")
	f.IntVar(&s.depth, "depth", explore.DefaultDepth, fmt.Sprintf("PCT's depth d, 1 to %d: the ordering constraints a bug may need (only with --strategy pct)", runtime.MaxDepth))
}

// options sets the strategy of opts; an error names the flag and what is
// allowed.
func (s *strategyFlags) options(opts *explore.Options, given func(string) bool) error {
	switch runtime.Strategy(s.strategy) {
	case runtime.StrategyRandom:
		if given("depth") {
			return usageErrorf("--depth %d: only --strategy pct takes a depth (the strategy is %s)", s.depth, s.strategy)
		}
	case runtime.StrategyPCT:
		if s.depth < 1 || s.depth > runtime.MaxDepth {
			return usageErrorf("--depth %d: want 1 to %d (default %d)", s.depth, runtime.MaxDepth, explore.DefaultDepth)
		}
		opts.Strategy, opts.Depth = runtime.StrategyPCT, s.depth
	default:
		return usageErrorf("--strategy %q: want random or pct", s.strategy)
	}
	return nil
}

// writeStrategy prints the sweep's strategy when it is not the default.
func writeStrategy(w io.Writer, sum *explore.Summary) {
	if sum.Strategy != "" {
		fmt.Fprintf(w, "strategy %s\n", sum.Scheduling)
	}
}
