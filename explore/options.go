package explore

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
)

// A sweep's options: what it runs (the seeds, their shard, the faults and
// the strategy) and what its checks report, with the defaults New fills
// in.

// Shard selects every Count-th seed of a sweep, starting with the Index-th.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// String writes the shard as I/N.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads I/N, with 0 <= I < N.
func ParseShard(v string) (Shard, error) {
	var s Shard
	if _, err := fmt.Sscanf(v, "%d/%d", &s.Index, &s.Count); err != nil || fmt.Sprintf("%d/%d", s.Index, s.Count) != v {
		return Shard{}, fmt.Errorf("%w: shard %s: want I/N, such as 0/4", ErrOptions, quote.Q(v))
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return Shard{}, fmt.Errorf("%w: shard %s: want 0 <= I < N", ErrOptions, quote.Q(v))
	}
	return s, nil
}

// Options tunes a sweep. The zero value explores seeds 1..1000 at the
// scenario's explore rates (or DefaultRates) on DefaultWorkers workers.
type Options struct {
	// First is the first seed (default 1; see FromSeedZero); Seeds how
	// many (default 1000). The last seed, First+Seeds-1, must fit a uint64.
	First uint64
	Seeds int
	// FromSeedZero starts the sweep at seed 0, which First's zero value
	// cannot say; First must then be 0.
	FromSeedZero bool
	// Rates are the random fault rates; nil takes the scenario's
	// explore.random, else DefaultRates.
	Rates transport.Rates
	// Latency is the random link latency of every attempt and reply
	// (transport.Latency): zero takes the scenario's explore.latency, else
	// DefaultLatency; NoLatency turns it off.
	Latency   transport.Latency
	NoLatency bool
	// Swarm draws each seed's own fault profile from the seed
	// (transport.Swarm, transport.SwarmLatency): which of the kinds Rates
	// names are on, their rates, and the spread of the latency. A failing
	// seed's profile is in Failing.Profile and Failing.ProfileLatency; the
	// seed
	// replays with it.
	Swarm bool
	// KeepRules keeps the scenario's own fault rules under the random
	// faults; by default only random faults are drawn.
	KeepRules bool
	// Workers runs seeds in parallel: 0 takes DefaultWorkers, the number
	// of CPUs. The summary does not depend on it: the first failing seed
	// is the lowest whatever the workers.
	Workers int
	// Shard restricts the sweep to one shard (default: all seeds).
	Shard Shard
	// MaxAmbiguous caps the turns of unknown effect (cut short by a reset,
	// a lost write or a cancellation) of a history whose linearizability is
	// checked (default DefaultMaxAmbiguous).
	MaxAmbiguous int
	// Interleaving names the turns meant to interleave at their awaits
	// (see KindInterleaving): a method ("Flush", or "OUTBOX.Flush" for one
	// namespace's), "fetch" for fetch handlers, "alarm", "schedule" or
	// "queue" for background turns. A history that only the interleaving
	// of such a turn with the requests that came in during its waits, as
	// they ran, explains is no violation: the expectations judge it.
	Interleaving []string
	// NoLinearizability skips the linearizability check.
	NoLinearizability bool
	// Horizon bounds each run in virtual time and then lets the objects'
	// background work go on for as long after it, to report what never
	// settles (rule C8): 0 takes the scenario's explore.horizon, else
	// DefaultHorizon; a negative value turns the liveness checks off.
	Horizon time.Duration
	// CheckDeterminism runs each failing seed, and every 64th of the
	// others, a second time and reports a difference between the two runs
	// (their traces, results and storage, byte for byte) as a violation of
	// kind KindNondeterminism, naming the first line that differs.
	CheckDeterminism bool
	// RecurringAlarms says alarms that re-arm for ever are intended (a
	// heartbeat): they are not reported (also explore.recurring-alarms).
	RecurringAlarms bool
	// MinChecked is the least share of object histories (0 to 1) a sweep
	// must check for its report to be clean (rule C3): 0 takes
	// DefaultMinChecked, a negative value sets no minimum.
	MinChecked float64
	// FailFast stops a sweep at its first failing seed: no seed is handed
	// out once one failed; those already running finish, so the lowest
	// failing seed is still the lowest of the shard, and it is shrunk. The
	// summary says Stopped, not Complete.
	FailFast bool
	// NoShrink keeps the first failing seed's whole fault set.
	NoShrink bool
	// ShrinkTime bounds the wall-clock time shrinking may take (default
	// DefaultShrinkTime); when it runs out, the smallest failing fault set
	// found so far is kept and Failing.Shrink says so. The clock only
	// stops shrinking: within the budget, the result depends on the seed
	// alone.
	ShrinkTime time.Duration
	// ShrinkProgress, if set, is called after each replay of shrinking
	// with the replays made and the size of the smallest failing fault
	// set found so far.
	ShrinkProgress func(replays, faults int)
	// Classes runs namespaces with other constructors (planted bugs).
	Classes map[string]runtime.Constructor
	// Progress, if set, is called after each seed with the sweep's
	// progress, one call at a time.
	Progress func(Progress)
	// Exhaustive runs every placement of at most MaxFaults faults (each
	// kind the rates name, at any rate above 0) over the run's delivery
	// decision points, as a tree search from the fault-free run of seed
	// First, instead of random seeds (exhaustive_tree.go); the summary
	// ends with a Certificate or the first failing placement, shrunk.
	// MaxFaults is 1 to MaxExhaustiveFaults (default DefaultMaxFaults);
	// MaxRuns bounds the runs (default DefaultMaxRuns). Progress is not
	// called.
	Exhaustive         bool
	MaxFaults, MaxRuns int
	// StallLimit is the watchdog's wall-clock stall limit of each run
	// (runtime.WithStallLimit): 0 takes runtime.DefaultStallLimit, a
	// negative value turns the watchdog off.
	StallLimit time.Duration
	// Strategy is how the sweep searches: runtime.StrategyRandom the
	// fixed rates and a fresh seeded draw per wake-up for the tasks ready
	// at one virtual instant; runtime.StrategyPCT probabilistic
	// concurrency testing of Depth (1 to runtime.MaxDepth, 0:
	// DefaultDepth), its k measured by a run of CalibrationSeed (see
	// Scheduling, strategy.go), with no latency unless Latency or the
	// scenario's explore.latency gives one; runtime.StrategyMix each seed
	// one of random, swarm and PCT (no latency), drawn from the seed
	// (MixPick, mix.go). The zero value takes the scenario's
	// explore.strategy (with its depth and swarm), else mix, but with
	// Swarm or Exhaustive, which run the random strategy.
	Strategy runtime.Strategy
	Depth    int
}

// Progress is how far a sweep has got.
type Progress struct {
	// Done counts the seeds checked, of Total in the shard; Failed those
	// with a violation, and Violations their violations.
	Done, Total, Failed, Violations int
}

// ErrOptions is wrapped by errors for options out of range.
var ErrOptions = errors.New("explore options")

// defaults merges the scenario's explore block into o, checks every
// option (resolve) and fills in the defaults.
func (o *Options) defaults(sc *scenario.Scenario) error {
	_, err := o.resolve(sc)
	return err
}

// fill fills in the defaults of options resolve has merged and checked.
func (o *Options) fill(sc *scenario.Scenario) error {
	if err := o.interleavingDefaults(sc); err != nil {
		return err
	}
	if o.Exhaustive {
		o.MaxFaults = cmp.Or(o.MaxFaults, DefaultMaxFaults)
		o.MaxRuns = cmp.Or(o.MaxRuns, DefaultMaxRuns)
		o.Seeds = 1
	}
	if err := o.seedDefaults(); err != nil {
		return err
	}
	o.Workers = cmp.Or(o.Workers, DefaultWorkers())
	if o.Shard == (Shard{}) {
		o.Shard = Shard{Index: 0, Count: 1}
	}
	o.MaxAmbiguous = cmp.Or(o.MaxAmbiguous, DefaultMaxAmbiguous)
	switch {
	case o.MinChecked == 0:
		o.MinChecked = DefaultMinChecked
	case o.MinChecked < 0:
		o.MinChecked = -1
	}
	o.ShrinkTime = cmp.Or(o.ShrinkTime, DefaultShrinkTime)
	if len(o.Rates) == 0 {
		o.Rates = DefaultRates()
	}
	if err := transport.Random(o.Rates).Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	switch {
	case o.NoLatency:
		o.Latency = transport.Latency{}
	case o.Latency.On():
	case o.Strategy == runtime.StrategyPCT: // PCT orders same-instant tasks, which latency spreads apart
		o.Latency = transport.Latency{}
	default:
		o.Latency = DefaultLatency
	}
	if err := o.Latency.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	o.strategyDefaults()
	return nil
}

// seedDefaults checks and fills in the seed range: First, FromSeedZero and
// Seeds.
func (o *Options) seedDefaults() error {
	if o.FromSeedZero && o.First != 0 {
		return fmt.Errorf("%w: first seed is %d with FromSeedZero, must be 0", ErrOptions, o.First)
	}
	if o.First == 0 && !o.FromSeedZero {
		o.First = 1
	}
	if o.Seeds == 0 {
		o.Seeds = 1000
	}
	if o.First > math.MaxUint64-uint64(o.Seeds-1) {
		return &OptionError{Option: "first", Value: fmt.Sprint(o.First), With: "seeds", WithValue: fmt.Sprint(o.Seeds),
			Want: fmt.Sprintf("the last seed, first+seeds-1, must be at most %d", uint64(math.MaxUint64))}
	}
	return nil
}
