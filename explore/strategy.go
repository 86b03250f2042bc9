package explore

import (
	"cmp"
	"context"
	"fmt"

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
	// Strategy is "pct" for PCT, "mix" for a mix (each seed draws its
	// strategy, MixPick), empty for the random tie-break.
	Strategy runtime.Strategy `json:"strategy,omitempty"`
	// Depth is PCT's d; PCTSteps its k, measured by the run of
	// CalibrationSeed.
	Depth    int    `json:"depth,omitempty"`
	PCTSteps uint64 `json:"pctSteps,omitempty"`
	// Mix names a mix sweep's shares of seeds per strategy.
	Mix string `json:"mix,omitempty"`
}

// String names the strategy for a person: "random", "pct (depth 3,
// change points among 412 steps)" or "mix (random=50%,... ; pct depth
// 3, ...)".
func (s Scheduling) String() string {
	switch s.Strategy {
	case runtime.StrategyPCT:
		return fmt.Sprintf("pct (depth %d, change points among %d steps)", s.Depth, s.PCTSteps)
	case runtime.StrategyMix:
		depth := fmt.Sprintf("depth %d to %d (drawn per seed)", MixMinDepth, MixMaxDepth)
		if s.Depth > 0 {
			depth = fmt.Sprintf("depth %d", s.Depth)
		}
		return fmt.Sprintf("mix (each seed draws its own: %s; pct seeds %s, change points among %d steps, no latency)", s.Mix, depth, s.PCTSteps)
	}
	return string(runtime.StrategyRandom)
}

// seedDepth is the PCT depth of seed's run: the sweep's, or, for a mix
// that names none, the seed's own draw (MixDepth).
func (s Scheduling) seedDepth(seed uint64) int {
	if s.Strategy == runtime.StrategyMix && s.Depth == 0 {
		return MixDepth(seed)
	}
	return s.Depth
}

// flags are the dosim explore flags that select the strategy, for a
// replay command.
func (s Scheduling) flags() string {
	switch s.Strategy {
	case runtime.StrategyPCT:
		return fmt.Sprintf(" --strategy pct --depth %d", s.Depth)
	case runtime.StrategyMix:
		if s.Depth == 0 {
			return " --strategy mix"
		}
		return fmt.Sprintf(" --strategy mix --depth %d", s.Depth)
	}
	return " --strategy random"
}

// pctSchedule is the runtime's schedule of the sweep's PCT runs of depth.
func (s Scheduling) pctSchedule(depth int) runtime.Schedule {
	return runtime.Schedule{Strategy: runtime.StrategyPCT, Depth: depth, Steps: max(s.PCTSteps, 1)}
}

// strategyDefaults fills in Strategy and Depth, resolve having checked
// them: the zero
// Strategy is mix, but for a swarm sweep or an exhaustive search (which
// draw no strategy per seed), which keep the random tie-break.
func (o *Options) strategyDefaults() {
	if o.Strategy == "" {
		o.Strategy = runtime.StrategyMix
		if o.Swarm || o.Exhaustive {
			o.Strategy = runtime.StrategyRandom
		}
	}
	switch o.Strategy {
	case runtime.StrategyRandom:
		o.Strategy = ""
	case runtime.StrategyPCT:
		o.Depth = cmp.Or(o.Depth, DefaultDepth)
	} // mix: a depth of 0 is drawn per seed (MixDepth)
}

// StrategyNames are the names of Strategies, for messages.
func StrategyNames() []string {
	var out []string
	for _, s := range Strategies() {
		out = append(out, string(s))
	}
	return out
}

// Strategies are the strategies Options.Strategy may name: mix (the
// default), random, swarm (random with Swarm) and pct.
func Strategies() []runtime.Strategy {
	return []runtime.Strategy{runtime.StrategyMix, runtime.StrategyRandom, runtime.StrategySwarm, runtime.StrategyPCT}
}

// calibrated is the sweep's scheduling once PCT's k is measured (steps,
// the step count of the calibration run).
func (o *Options) calibrated(steps uint64) Scheduling {
	s := Scheduling{Strategy: o.Strategy, Depth: o.Depth, PCTSteps: max(steps, 1)}
	if s.Strategy == runtime.StrategyMix {
		s.Mix = mixShares
	}
	return s
}

// calibrationRun is the run that measures k: the sweep's rates, the
// latency of its PCT seeds (none under mix), the random tie-break.
func (o *Options) calibrationRun() seedRun {
	r := o.plainRun(Scheduling{Strategy: o.Strategy}, runtime.StrategyPCT, 0)
	r.schedule = runtime.Schedule{}
	return r
}

// calibrate measures PCT's k for the explorer's sweep, once, when PCT
// seeds can occur (strategy pct or mix): the steps of the run of
// CalibrationSeed under the random tie-break, at the latency of the
// sweep's PCT seeds. Nothing but its step count is kept.
func (e *Explorer) calibrate() {
	if e.opts.Strategy == "" {
		return
	}
	steps := uint64(runtime.DefaultSteps) // a run that cannot end has no count
	c := e.opts.calibrationRun()
	if res, _ := e.sc.Run(append(e.runOptionsAt(nil, c.rates, c.latency, c.schedule), scenario.SkipExpectations(), scenario.Seed(CalibrationSeed))...); res != nil {
		steps = res.Steps()
	}
	e.sched = e.opts.calibrated(steps)
}

// calibrate is Explorer.calibrate for a function: the steps of its run
// with CalibrationSeed, its random faults and the random tie-break.
func (fe *FuncExplorer) calibrate() {
	if fe.opts.Strategy == "" {
		return
	}
	rt := fe.runtimeOf(CalibrationSeed, fe.opts.calibrationRun(), nil, inputSource{}, horizon(fe.opts.Horizon, nil))
	_ = rt.Run(func(ctx context.Context) error { return fe.fn(ctx, rt) })
	steps := rt.Steps()
	_ = rt.Close()
	fe.sched = fe.opts.calibrated(steps)
}
