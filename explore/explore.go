// Package explore searches the fault space of a scenario for the seed where
// an object breaks.
//
// Each seed runs the scenario with faults drawn per attempt at the given
// rates (from the seed, so a seed replays exactly) and checks the run:
//
//   - the S-rule invariants: an unmarked method runs at most once per call,
//     a call makes at most MaxRetries+1 attempts, no retry starts at or
//     after its deadline, the first attempt is never cancelled, and a call
//     counts one subrequest;
//   - the scenario's explore.expect expectations, which must hold under any
//     faults;
//   - linearizability of each object's history against a sequential model,
//     checked with porcupine: the class itself, one operation at a time.
//     An object's history is every turn it ran: its calls (each applied
//     once, within the span of the attempts that ran it) and its own
//     background work (alarm deliveries, runs of its scheduled and queued
//     tasks, rule C2). The model replays each turn alone at the instant it
//     ran, with the clock readings, seeded draws and answers of calls out
//     it read then (rule C1, runtime.Replay), so a class that stores the
//     time or draws at random is judged by what it could have computed. A
//     turn cut short (a reset, a lost write, a cancellation) may or may
//     not have taken effect. A history the check cannot judge is counted
//     with its reason (Summary.Unchecked), never reported as a violation.
//
// On a violation the explorer keeps the first failing seed, shrinks its
// fault set by delta debugging to a smallest one that still fails (within
// Options.ShrinkTime; Failing.Shrink says how it went, including when the
// faults replayed as rules did not reproduce the failure), and can write
// artifacts:
// the timeline, porcupine's visualisation and a scenario that replays the
// shrunk faults.
//
// Options.Exhaustive replaces the random seeds with a bounded exhaustive
// search: every placement of at most Options.MaxFaults faults over a
// run's delivery decision points, ending with a Certificate.
//
// Seed ranges split into shards (Options.Shard) so that many machines can
// run one sweep; Merge combines their summaries.
//
// A Go function that drives objects is explored the same way, with no
// scenario file (NewFunc, RunFunc). This package is a plain library, which
// the dosim command links: the go test entry points that fail a test with
// what a sweep found (dosimtest.Func, dosimtest.Scenario) are package
// dosimtest's.
//
// Configuration is an options struct (Options), given to New, whose zero
// value is the default in every field (0 takes the documented default, a
// negative value turns a limit off): a sweep has many independent knobs
// and one call that takes them, as verify.Options and amplify.Options
// are; constructors of long-lived values take functional options instead
// (runtime.New, scenario.Load).
package explore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
)

// DefaultMaxAmbiguous is how many turns of unknown effect (cut short by a
// reset, a lost write or a cancellation) a history may hold before its
// linearizability check is skipped (ReasonCut).
const DefaultMaxAmbiguous = 10

// Explorer checks seeds of one scenario. Make it with New; it is safe for
// concurrent use by the workers of one sweep.
type Explorer struct {
	sc        *scenario.Scenario
	opts      Options
	overrides []Override                 // the file's fields the options replaced
	marks     map[string]map[string]bool // namespace -> method -> marked
	ctors     map[string]runtime.Constructor
	// inputs are the model's step keys of the scenario's calls, without
	// their turns' reads, by scenario.Call.Index: made once.
	inputs []string
	models *models
	now    func() time.Time // the wall clock, read only to stop shrinking
	// random are the run options of a seed with random faults, but its
	// seed: made once (with the fault plan), read by every seed.
	// fixed, fixedSweep are the same for the seeds that run the random
	// tie-break (index 0) and PCT of depth d (index d) with no swarm
	// profile.
	fixed, fixedSweep [1 + runtime.MaxDepth][]scenario.RunOption
	sched             Scheduling // the runs' strategy (calibrate)
}

// New prepares an explorer for sc.
func New(sc *scenario.Scenario, opts Options) (*Explorer, error) {
	if sc == nil {
		return nil, fmt.Errorf("%w: no scenario", ErrOptions)
	}
	overrides, err := opts.resolve(sc)
	if err != nil {
		return nil, err
	}
	e := &Explorer{sc: sc, opts: opts, overrides: overrides, marks: map[string]map[string]bool{}, now: time.Now}
	ctors := map[string]runtime.Constructor{}
	for _, ns := range sc.Namespaces {
		ctor := ns.Class.New
		if c, ok := opts.Classes[ns.Name]; ok && c != nil {
			ctor = c
		}
		ctors[ns.Name] = ctor
		marks, err := methodMarks(ns.Name, ctor)
		if err != nil {
			return nil, err
		}
		e.marks[ns.Name] = marks
	}
	e.models, e.ctors = newModels(), ctors
	calls := sc.Calls()
	e.inputs = make([]string, len(calls))
	for _, c := range calls {
		if c.Index < 0 || c.Index >= len(calls) {
			return nil, fmt.Errorf("explore: call %s has index %d of %d calls", c.Path, c.Index, len(calls))
		}
		e.inputs[c.Index] = callInput(c.Method, c.Args)
	}
	e.calibrate()
	for i := range e.fixed {
		st, depth := runtime.StrategyPCT, i
		if i == 0 {
			st = runtime.StrategyRandom
		}
		r := e.opts.plainRun(e.sched, st, depth)
		e.fixed[i] = e.runOptionsAt(nil, r.rates, r.latency, r.schedule)
		e.fixedSweep[i] = append(e.runOptionsAt(nil, r.rates, r.latency, r.schedule), scenario.SkipExpectations())
	}
	return e, nil
}

// Options returns the options in force, defaults filled in.
func (e *Explorer) Options() Options { return e.opts }

// methodMarks builds one instance of a class to read its methods' marks.
func methodMarks(ns string, ctor runtime.Constructor) (map[string]bool, error) {
	rt := runtime.New()
	defer rt.Close()
	n := rt.Namespace(ns, ctor)
	ms, err := n.Methods(n.IDFromName("explore"))
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	out := make(map[string]bool, len(ms))
	for name, m := range ms {
		out[name] = m.IsRetryable()
	}
	return out, nil
}

// runOptionsAt are the scenario run options, but the seed: random faults
// drawn at rates, or an explicit fault set when rules is not nil (with the
// connection faults of rates, which strike no attempt); link latency l and
// schedule sched.
func (e *Explorer) runOptionsAt(rules []transport.Rule, rates transport.Rates, l transport.Latency, sched runtime.Schedule) []scenario.RunOption {
	opts := []scenario.RunOption{scenario.History(), scenario.Horizon(horizon(e.opts.Horizon, e.sc)), scenario.Settled(certain(e.recurringOK())),
		scenario.Schedule(sched)}
	for ns, c := range e.opts.Classes {
		opts = append(opts, scenario.Class(ns, c))
	}
	if e.opts.StallLimit != 0 {
		opts = append(opts, scenario.StallLimit(e.opts.StallLimit))
	}
	var base []transport.Rule
	if e.opts.KeepRules {
		base = e.sc.Faults.Rules
	}
	if rules != nil {
		// The seed's connection drops stay, as its latency does: they
		// strike messages, not the attempts a fault set names.
		return append(opts, scenario.ReplaceFaults(scenario.Faults{Rules: append(append([]transport.Rule(nil), rules...), base...), Rates: rates.OnConnection(), Latency: l}))
	}
	return append(opts, scenario.ReplaceFaults(scenario.Faults{Rules: base, Rates: rates, Latency: l}))
}

// Check runs one seed with random faults and returns what it violated.
func (e *Explorer) Check(seed uint64) (*SeedResult, error) {
	return e.check(seed, nil, checkAll)
}

// SeedResult is what one seed did and violated.
type SeedResult struct {
	Seed       uint64
	Result     *scenario.Result
	Violations []Violation
	// Faults are the faults the seed's attempts met, as rules naming each
	// call and attempt: replaying them gives the same run.
	Faults []transport.Rule
	// Checked counts the object histories whose linearizability was
	// checked; Unchecked those that were not, by reason (the Reason
	// constants).
	Checked   int
	Unchecked map[string]int
	// Linear holds what the linearizability check needs to draw each
	// violating history, by object (nil when none violated).
	Linear map[string]*History

	paths    pathCounts
	drops    int  // connections the fault drop-connection dropped
	timedOut bool // a linearizability check ran out of its time (shrinking only)
}

func (e *Explorer) check(seed uint64, rules []transport.Rule, mode checkMode) (*SeedResult, error) {
	var opts []scenario.RunOption
	run := e.opts.seedRun(e.sched, seed)
	switch {
	case rules != nil: // a seed's shrunk faults keep its latency and schedule
		opts = e.runOptionsAt(rules, run.rates, run.latency, run.schedule)
	case run.swarm:
		opts = e.runOptionsAt(nil, run.rates, run.latency, run.schedule)
		if mode.sweep {
			opts = append(opts, scenario.SkipExpectations())
		}
	case mode.sweep:
		opts = e.fixedSweep[pctIndex(run)]
	default:
		opts = e.fixed[pctIndex(run)]
	}
	res, err := e.sc.Run(append(opts[:len(opts):len(opts)], scenario.Seed(seed))...)
	if err != nil {
		v, ok := horizonViolation(seed, err)
		if !ok {
			v = Violation{Seed: seed, Kind: KindError, Message: err.Error()}
		}
		return &SeedResult{Seed: seed, Violations: []Violation{v}}, nil
	}
	out := &SeedResult{Seed: seed, Result: res, Faults: drawn(res)}
	out.paths = countPaths(res.Calls, res.Events, marksOfCall(e.marks))
	out.drops = countDrops(res.Events)
	out.Violations = append(out.Violations, e.invariants(seed, res)...)
	for _, f := range res.CheckExplore() {
		out.Violations = append(out.Violations, Violation{Seed: seed, Kind: KindExpectation, Message: f.String()})
	}
	if lv := res.Liveness; lv != nil {
		out.Violations = append(out.Violations, liveness(seed, lv.Horizon, lv.Ran, lv.End, lv.After, lv.Err, e.recurringOK())...)
	}
	if !e.opts.NoLinearizability && !mode.skipLinear {
		lr := e.linearizable(seed, res, mode.linearTimeout)
		out.Violations = append(out.Violations, lr.violations...)
		out.Linear, out.Checked, out.Unchecked = lr.histories, lr.checked, lr.unchecked
		out.timedOut = lr.timedOut
	}
	if e.opts.CheckDeterminism && mode.sweep && (len(out.Violations) > 0 || sampled(seed)) {
		again, err := e.sc.Run(append(opts[:len(opts):len(opts)], scenario.Seed(seed))...)
		first := runText(res.Trace(), res.Calls, res.Storage)
		second := ""
		if err == nil {
			second = runText(again.Trace(), again.Calls, again.Storage)
		} else {
			second = "error " + err.Error()
		}
		if v, ok := differs(seed, first, second); ok {
			out.Violations = append(out.Violations, v)
		}
	}
	return out, nil
}

// drawn lists the faults a run's attempts met, as rules naming each call
// (by its order) and attempt.
func drawn(res *scenario.Result) []transport.Rule {
	var out []transport.Rule
	for i, c := range res.Calls {
		for _, a := range c.Attempts {
			if a.Fault != transport.None {
				out = append(out, transport.Rule{Call: i + 1, Method: c.Method, Attempt: a.N, Fault: a.Fault})
			}
		}
	}
	return out
}

// Run explores the seeds opts select and returns the summary. The first
// failing seed (the lowest) is shrunk unless opts.NoShrink.
func Run(sc *scenario.Scenario, opts Options) (*Summary, error) {
	e, err := New(sc, opts)
	if err != nil {
		return nil, err
	}
	return e.Sweep()
}

// shardSeeds is how many of seeds first..first+seeds-1 shard sh holds:
// those whose offset from first is sh.Index modulo sh.Count.
func shardSeeds(seeds int, sh Shard) int {
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= seeds {
		return 0
	}
	return (seeds-sh.Index-1)/sh.Count + 1
}

// ShardSeeds is how many seeds the explorer's shard holds: what a sweep
// runs.
func (e *Explorer) ShardSeeds() int { return shardSeeds(e.opts.Seeds, e.opts.Shard) }

// nthSeed is the k-th seed (from 0) of the explorer's shard. The seed
// range is never listed: a sweep of 10^12 seeds holds one counter.
func (e *Explorer) nthSeed(k int) uint64 {
	o := e.opts
	return o.First + uint64(o.Shard.Index) + uint64(k)*uint64(o.Shard.Count)
}

// Overrides are the fields of the scenario's explore block that the
// options replaced (rule C11), in the order the block lists them.
func (e *Explorer) Overrides() []Override { return e.overrides }

// Sweep runs every seed of the explorer's options.
func (e *Explorer) Sweep() (*Summary, error) { return e.SweepContext(context.Background()) }

// SweepContext runs every seed of the explorer's options until ctx is
// done (or, with Options.FailFast, until a seed fails). Seeds go to the
// workers in order and a seed handed out is always finished, so an
// interrupted sweep has checked the first Ran seeds of its shard; its
// summary says Complete: false and its first failing seed is not shrunk.
// A sweep stopped by FailFast says Stopped, and its first failing seed,
// the lowest of the shard, is shrunk. Once every seed ran, ctx done stops shrinking the first
// failing seed: its Shrink says ShrinkInterrupted. Memory does not grow
// with the seeds: the summary keeps counts and the first MaxViolations
// violations only.
func (e *Explorer) SweepContext(ctx context.Context) (*Summary, error) {
	if e.opts.Exhaustive {
		return e.exhaustive(ctx)
	}
	total := e.ShardSeeds()
	sum := e.newSummary()
	var (
		mu     sync.Mutex
		errRun error
	)
	seedLoop(ctx, e.opts.Workers, total, e.opts.FailFast, func(k int) bool {
		r, err := e.check(e.nthSeed(k), nil, checkSweep)
		mu.Lock()
		defer mu.Unlock()
		if err != nil && errRun == nil {
			errRun = err
		}
		if r != nil {
			sum.add(r)
		}
		if e.opts.Progress != nil {
			e.opts.Progress(Progress{Done: sum.Ran, Total: total, Failed: sum.Failed, Violations: sum.Total})
		}
		return r != nil && len(r.Violations) > 0
	})
	if errRun != nil {
		return nil, errRun
	}
	sum.Complete = sum.Ran == total // else ctx was done first, or a seed failed (FailFast)
	sum.Stopped = !sum.Complete && e.opts.FailFast && sum.Failed > 0 && ctx.Err() == nil
	if len(sum.Violations) > 0 && (sum.Complete || sum.Stopped) {
		f, err := e.failing(ctx, sum.Violations[0].Seed)
		if err != nil {
			return nil, err
		}
		sum.FirstFailing = f.orSweep(sum.Violations)
	}
	sum.seal()
	return sum, nil
}
