package runtime

import (
	"errors"
	"fmt"

	"github.com/dosim/dosim/internal/sched"
)

// Strategy names how a run orders the tasks that are ready at one virtual
// instant (a caller's wake-up, an attempt, an object turn, a reply): the
// only choice the scheduler makes, since virtual time orders everything
// else (rule D1).
type Strategy string

const (
	// StrategyRandom (also the empty Strategy) breaks each tie with a
	// fresh draw from the seed whenever a task becomes ready.
	StrategyRandom Strategy = "random"
	// StrategyPCT is probabilistic concurrency testing (Burckhardt et al.,
	// ASPLOS'10): each task draws a priority from the seed when it is
	// created and the ready task of highest priority runs first; Depth-1
	// change points, drawn among the run's first Steps steps, each drop
	// the task running that step below every other. A step is one run of
	// a task from one blocking point to the next (a task is never
	// preempted). A bug that needs Depth ordering constraints among n
	// tasks is found with probability at least 1/(n·Steps^(Depth-1)) per
	// seed, when Steps is at least the run's steps.
	StrategyPCT Strategy = "pct"
	// StrategyMix is a sweep's strategy, not a run's (a Schedule refuses
	// it): each seed of an explorer's sweep draws from the seed which of
	// the others it runs, random (fixed rates or a swarm profile) or PCT
	// (explore.Options.Strategy, explore/mix.go).
	StrategyMix Strategy = "mix"
	// StrategySwarm is, as StrategyMix, a sweep's strategy, not a run's:
	// the random tie-break at a fault profile each seed draws from itself
	// (transport.Swarm). A mix sweep's seed that drew it says so
	// (explore.Failing.Strategy).
	StrategySwarm Strategy = "swarm"
)

// Strategies are the strategies a Schedule may name.
func Strategies() []Strategy { return []Strategy{StrategyRandom, StrategyPCT} }

// DefaultDepth is a PCT schedule's depth when Schedule.Depth is 0.
const DefaultDepth = 3

// MaxDepth is the largest PCT depth.
const MaxDepth = sched.MaxDepth

// DefaultSteps is a PCT schedule's k when Schedule.Steps is 0: the
// number of steps its change points are drawn among. The explorer
// measures it instead (explore.Options.Strategy).
const DefaultSteps = 1000

// ErrSchedule is wrapped by the error of a Schedule out of range.
var ErrSchedule = errors.New("schedule")

// Schedule is a run's scheduling strategy (WithSchedule).
type Schedule struct {
	// Strategy is StrategyRandom (the zero value) or StrategyPCT.
	Strategy Strategy
	// Depth is PCT's d, from 1 to MaxDepth (0: DefaultDepth); only for
	// StrategyPCT.
	Depth int
	// Steps is PCT's k (0: DefaultSteps); only for StrategyPCT.
	Steps uint64
}

// PCT reports whether s schedules by PCT.
func (s Schedule) PCT() bool { return s.Strategy == StrategyPCT }

// Validate reports a strategy that is not one of Strategies, or a depth
// out of range (only PCT takes one).
func (s Schedule) Validate() error {
	switch s.Strategy {
	case "", StrategyRandom:
		if s.Depth != 0 {
			return fmt.Errorf("%w: depth is %d with the random strategy; only pct takes a depth", ErrSchedule, s.Depth)
		}
	case StrategyPCT:
		if s.Depth < 0 || s.Depth > MaxDepth {
			return fmt.Errorf("%w: depth is %d, must be from 1 to %d", ErrSchedule, s.Depth, MaxDepth)
		}
	default:
		return fmt.Errorf("%w: strategy is %q, must be %s or %s", ErrSchedule, s.Strategy, StrategyRandom, StrategyPCT)
	}
	return nil
}

// WithSchedule sets how the run orders the tasks ready at one instant
// (default: StrategyRandom). A Schedule that Validate refuses makes Run
// fail with its error.
func WithSchedule(s Schedule) Option {
	return optionFunc(func(r *Runtime) { r.schedule = &s })
}

// applySchedule sets the kernel's strategy, once it is made: PCT's
// change points are the first draws of the run.
func (r *Runtime) applySchedule() {
	if r.schedule == nil {
		return
	}
	s := *r.schedule
	if err := s.Validate(); err != nil {
		r.optErr = fmt.Errorf("runtime.WithSchedule: %w", err)
		return
	}
	if !s.PCT() {
		return
	}
	if s.Depth == 0 {
		s.Depth = DefaultDepth
	}
	if s.Steps == 0 {
		s.Steps = DefaultSteps
	}
	if err := r.k.SetPCT(s.Depth, s.Steps); err != nil {
		r.optErr = fmt.Errorf("runtime.WithSchedule: %w: %w", ErrSchedule, err)
	}
}

// Steps returns how many steps the run has taken: each time a task ran,
// from one of its blocking points to the next. It is what a PCT schedule
// of the same run takes as its Steps.
func (r *Runtime) Steps() uint64 { return r.k.Steps() }
