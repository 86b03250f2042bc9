package explore

import (
	"context"
	"fmt"
	"slices"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
)

// DefaultDepth is the PCT depth of a sweep whose Options.Depth is 0.
const DefaultDepth = runtime.DefaultDepth

// CalibrationSeed is the seed of the run that measures PCT's k for a
// sweep (Scheduling.PCTSteps): the sweep's runs, options and faults, with
// the random tie-break. It is the same for every shard of a sweep and for
// the replay of any of its seeds, so k is a function of the scenario and
// the options alone.
const CalibrationSeed = 0

// Scheduling is how a sweep's runs ordered the tasks ready at one instant
// (Options.Strategy), as its Summary records it: the empty Strategy is the
// random tie-break.
type Scheduling struct {
	// Strategy is "pct" for PCT, empty for the random tie-break.
	Strategy runtime.Strategy `json:"strategy,omitempty"`
	// Depth is PCT's d; PCTSteps its k, measured by the run of
	// CalibrationSeed.
	Depth    int    `json:"depth,omitempty"`
	PCTSteps uint64 `json:"pctSteps,omitempty"`
}

// String names the strategy for a person: "random", or "pct (depth 3,
// change points among 412 steps)".
func (s Scheduling) String() string {
	if s.Strategy != runtime.StrategyPCT {
		return string(runtime.StrategyRandom)
	}
	return fmt.Sprintf("pct (depth %d, change points among %d steps)", s.Depth, s.PCTSteps)
}

// flags are the dosim explore flags that select the strategy, for a
// replay command ("" for the random tie-break).
func (s Scheduling) flags() string {
	if s.Strategy != runtime.StrategyPCT {
		return ""
	}
	return fmt.Sprintf(" --strategy pct --depth %d", s.Depth)
}

// schedule is the runtime's schedule for the sweep's runs.
func (s Scheduling) schedule() runtime.Schedule {
	if s.Strategy != runtime.StrategyPCT {
		return runtime.Schedule{}
	}
	return runtime.Schedule{Strategy: runtime.StrategyPCT, Depth: s.Depth, Steps: max(s.PCTSteps, 1)}
}

// strategyDefaults checks Strategy and Depth and fills in Depth.
func (o *Options) strategyDefaults() error {
	switch o.Strategy {
	case "", runtime.StrategyRandom:
		o.Strategy = ""
		if o.Depth != 0 {
			return fmt.Errorf("%w: depth is %d with the random strategy: only --strategy pct takes a depth", ErrOptions, o.Depth)
		}
	case runtime.StrategyPCT:
		if o.Depth == 0 {
			o.Depth = DefaultDepth
		}
		if o.Depth < 1 || o.Depth > runtime.MaxDepth {
			return fmt.Errorf("%w: depth is %d, must be from 1 to %d", ErrOptions, o.Depth, runtime.MaxDepth)
		}
	default:
		return fmt.Errorf("%w: strategy is %s, must be one of %v", ErrOptions, quote.Q(string(o.Strategy)), slices.Collect(strategies()))
	}
	return nil
}

func strategies() func(yield func(runtime.Strategy) bool) {
	return slices.Values(runtime.Strategies())
}

// calibrate measures PCT's k for the explorer's sweep: the steps of the
// run of CalibrationSeed under the random tie-break (e.sched is still the
// zero value). Nothing but its step count is kept.
func (e *Explorer) calibrate() {
	if e.opts.Strategy != runtime.StrategyPCT {
		return
	}
	steps := uint64(runtime.DefaultSteps) // a run that cannot end has no count
	if res, _ := e.sc.Run(append(e.runOptions(nil), scenario.SkipExpectations(), scenario.Seed(CalibrationSeed))...); res != nil {
		steps = res.Steps()
	}
	e.sched = Scheduling{Strategy: runtime.StrategyPCT, Depth: e.opts.Depth, PCTSteps: max(steps, 1)}
}

// calibrate is Explorer.calibrate for a function: the steps of its run
// with CalibrationSeed, its random faults and the random tie-break.
func (fe *FuncExplorer) calibrate() {
	if fe.opts.Strategy != runtime.StrategyPCT {
		return
	}
	rt := fe.runtime(CalibrationSeed, nil, horizon(fe.opts.Horizon, nil))
	_ = rt.Run(func(ctx context.Context) error { return fe.fn(ctx, rt) })
	steps := rt.Steps()
	_ = rt.Close()
	fe.sched = Scheduling{Strategy: runtime.StrategyPCT, Depth: fe.opts.Depth, PCTSteps: max(steps, 1)}
}
