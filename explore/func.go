package explore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// NewFunc prepares an explorer of fn, a Go function that drives objects
// (rule U3): no scenario file. Each seed of opts runs fn as the root task
// of a fresh runtime seeded with it, whose link draws a random fault per
// attempt at opts.Rates (DefaultRates when nil). Every run is checked for
//
//   - the S-rule invariants on every call record (as Run checks them);
//   - linearizability of each object's history against its own class
//     (rule C2): every turn it ran, its calls and its own background work
//     (alarm deliveries, runs of its scheduled and queued tasks, also
//     after fn returned, up to the horizon), each replayed at the instant
//     it ran on the instance the turns before it left. A turn cut short
//     may or may not have taken effect; a call that failed before its
//     method ran had none. Histories the check cannot judge (more than
//     MaxAmbiguous turns cut short, state changed outside the object's
//     turns, a turn it cannot reproduce) are counted as not checked, by
//     reason, not as violations;
//   - liveness after fn returns, to the horizon (rule C8);
//   - fn's own returned error: a violation of kind KindFunc with its
//     message. A call that fails under faults is not a violation by
//     itself: fn decides which errors it expects.
//
// The first failing seed's drawn faults are shrunk by delta debugging
// (replayed as rules keyed by call order, method and attempt).
// SweepContext (or RunFuncContext) runs the sweep under a context, and
// Options.FailFast stops it at its first failing seed. From go
// test, dosimtest.Func runs the sweep, fails the test with the report and
// prints the command that replays the seed (rule U4).
//
// opts.Seeds must be at least 1; Classes, KeepRules and Shard do not apply
// to a function.
func NewFunc(opts Options, fn func(ctx context.Context, rt *runtime.Runtime) error) (*FuncExplorer, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: no function to explore", ErrOptions)
	}
	if opts.Seeds < 1 && !opts.Exhaustive {
		return nil, fmt.Errorf("%w: Seeds is %d, must be >= 1 (how many seeds to run)", ErrOptions, opts.Seeds)
	}
	if len(opts.Classes) > 0 {
		return nil, fmt.Errorf("%w: Classes is for scenarios; a function names its own constructors", ErrOptions)
	}
	if opts.KeepRules {
		return nil, fmt.Errorf("%w: KeepRules is for scenarios; a function has no fault rules of its own", ErrOptions)
	}
	if opts.Shard != (Shard{}) {
		return nil, fmt.Errorf("%w: Shard %s is for sweeps of the dosim command, not for a function", ErrOptions, opts.Shard)
	}
	if err := opts.defaults(nil); err != nil {
		return nil, err
	}
	fe := &FuncExplorer{opts: opts, fn: fn, models: newModels(),
		now: time.Now, marks: map[string]marksOf{}}
	fe.calibrate()
	return fe, nil
}

// RunFunc is RunFuncContext with a context that is never done.
func RunFunc(opts Options, fn func(ctx context.Context, rt *runtime.Runtime) error) (*Summary, error) {
	return RunFuncContext(context.Background(), opts, fn)
}

// RunFuncContext explores the seeds opts select of fn (see NewFunc) until
// ctx is done, and returns the summary (FuncExplorer.SweepContext). The
// first failing seed (the lowest) is shrunk unless opts.NoShrink; with
// opts.FailFast the sweep stops at it.
func RunFuncContext(ctx context.Context, opts Options, fn func(ctx context.Context, rt *runtime.Runtime) error) (*Summary, error) {
	fe, err := NewFunc(opts, fn)
	if err != nil {
		return nil, err
	}
	return fe.SweepContext(ctx)
}

// Options returns the options in force, defaults filled in.
func (fe *FuncExplorer) Options() Options { return fe.opts }

// FuncRun is one run of an explored function kept whole: the run a
// failing seed's report describes (rule C5), for its timeline and
// artifacts.
type FuncRun struct {
	fe *FuncExplorer
	f  *Failing
	r  *funcSeed
}

// Rerun runs again the run f describes and keeps it: the shrunk replay
// (the seed with the shrunk faults only) when f.Run is RunShrunk, else
// the seed's own run, with the faults it drew.
func (fe *FuncExplorer) Rerun(f *Failing) *FuncRun {
	var rules []transport.Rule // nil: the seed's own run, with its random faults
	if f.Run == RunShrunk {
		rules = append([]transport.Rule{}, f.Shrunk...)
	}
	return &FuncRun{fe: fe, f: f, r: fe.check(f.Seed, rules, checkMode{}, true)}
}

// FaultsStruck returns nil when the run is the seed's own, or when each
// fault of its set struck an attempt; else an error wrapping
// ErrFaultStruckNothing that names each fault that struck nothing (rule
// C11): a replay by faults that does not describe its run.
func (r *FuncRun) FaultsStruck() error {
	if r.f.Run != RunShrunk || r.r.report == nil {
		return nil
	}
	return struckNothing(r.f.Shrunk, r.r.report.Calls)
}

// WriteTimeline writes the run's text timeline, as dosim run draws it.
func (r *FuncRun) WriteTimeline(w io.Writer) error {
	return render.Text(w, *r.r.report, render.TextOptions{})
}

// WriteArtifacts writes the run's artifacts under dir, made if need be:
// its timeline (text and HTML), porcupine's view of each of its histories
// that failed the check, its violations, the shrunk faults and replay, the
// command that replays it.
func (r *FuncRun) WriteArtifacts(dir, replay string) error {
	return r.fe.writeArtifacts(dir, r.f, r.r, replay)
}

// FuncExplorer checks seeds of one function. Make it with NewFunc; it is
// safe for concurrent use by the workers of one sweep.
type FuncExplorer struct {
	opts   Options
	fn     func(ctx context.Context, rt *runtime.Runtime) error
	models *models
	now    func() time.Time // the wall clock, read only to stop shrinking
	sched  Scheduling       // the runs' strategy (calibrate)

	mu    sync.Mutex
	marks map[string]marksOf // namespace -> its methods' marks
}

type marksOf struct {
	marks map[string]bool
	err   error
}

// funcSeed is what one seed of a function did and violated.
type funcSeed struct {
	SeedResult
	report *render.Report // kept when asked
	trace  string         // all the run did, with checkMode.trace
}

// methodMarks reads (once per namespace) which of its methods are marked.
func (fe *FuncExplorer) methodMarks(ns string, ctor runtime.Constructor) (map[string]bool, error) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if m, ok := fe.marks[ns]; ok {
		return m.marks, m.err
	}
	marks, err := methodMarks(ns, ctor)
	fe.marks[ns] = marksOf{marks, err}
	return marks, err
}

// check runs fn with seed: random faults, or the explicit rules when not
// nil. keep keeps the run's report, for the timeline and artifacts.
func (fe *FuncExplorer) check(seed uint64, rules []transport.Rule, mode checkMode, keep bool) *funcSeed {
	return fe.checkWith(seed, rules, inputSource{}, mode, keep)
}

// checkWith is check with the decisions a fuzz input makes (fuzz.go): the
// random faults and latencies read from src.choices first when not nil,
// the kernel's draws from src.ties.
func (fe *FuncExplorer) checkWith(seed uint64, rules []transport.Rule, src inputSource, mode checkMode, keep bool) *funcSeed {
	h := horizon(fe.opts.Horizon, nil)
	rt := fe.runtimeWith(seed, rules, src, h)
	defer rt.Close()
	var fnErr error
	runErr := rt.Run(func(ctx context.Context) error {
		fnErr = fe.fn(ctx, rt)
		return nil
	})
	return fe.checkRun(seed, rt, h, runErr, fnErr, mode, keep)
}

// runtimeWith makes the runtime of seed's run (its strategy's rates,
// latency and schedule): random faults, or the explicit rules when not
// nil; the decisions of a fuzz input (src); horizon h.
func (fe *FuncExplorer) runtimeWith(seed uint64, rules []transport.Rule, src inputSource, h time.Duration) *runtime.Runtime {
	r, ties := fe.opts.inputRun(fe.sched, seed, src.ties)
	src.ties = ties
	return fe.runtimeOf(seed, r, rules, src, h)
}

// runtimeOf is runtimeWith for the seed's run r: its rates, latency and
// schedule.
func (fe *FuncExplorer) runtimeOf(seed uint64, r seedRun, rules []transport.Rule, src inputSource, h time.Duration) *runtime.Runtime {
	latency := r.latency
	plan := transport.Random(r.rates)
	if rules != nil {
		// The seed's connection drops stay, as its latency does.
		plan = transport.Plan(rules...).WithRandom(r.rates.OnConnection())
	}
	if latency.On() {
		plan = plan.WithLatency(latency)
	}
	if src.choices != nil {
		plan = plan.WithChoices(src.choices)
	}
	return runtime.New(runtime.WithSeed(seed), runtime.WithTieBytes(src.ties), runtime.WithFaults(plan), runtime.WithHistory(), runtime.WithHorizon(h),
		runtime.WithStallLimit(cmp.Or(fe.opts.StallLimit, runtime.DefaultStallLimit)), runtime.WithSchedule(r.schedule))
}

// checkRun checks the run of seed that rt made (see check).
func (fe *FuncExplorer) checkRun(seed uint64, rt *runtime.Runtime, h time.Duration, runErr, fnErr error, mode checkMode, keep bool) *funcSeed {
	out := &funcSeed{SeedResult: SeedResult{Seed: seed}}
	bad := func(kind, object, msg string) {
		out.Violations = append(out.Violations, Violation{Seed: seed, Kind: kind, Object: object, Message: msg})
	}
	if v, ok := horizonViolation(seed, runErr); ok {
		out.Violations = append(out.Violations, v)
	} else if runErr != nil {
		bad(KindError, "", runErr.Error())
	}
	if fnErr != nil {
		bad(KindFunc, "", fnErr.Error())
	}
	// Rule C8: what the background work leaves. It runs before anything
	// is read of the run: its turns, the calls they make and the effects
	// they record are the run's as much as the function's (rule C2).
	var lateViolations []Violation
	if h > 0 && runErr == nil {
		end := rt.Backlogs()
		var ran time.Duration
		var qerr error
		if rt.BackgroundPending() {
			settled := certain(fe.opts.RecurringAlarms)
			ran, qerr = rt.QuiesceUntil(h, func(now []runtime.Backlog) bool { return settled(end, now) })
		}
		lateViolations = liveness(seed, h, ran, end, rt.Backlogs(), qerr, fe.opts.RecurringAlarms)
	}
	calls := rt.Calls()
	out.Faults = firedRules(calls)
	namespaces := classNamespaces(rt)
	broken := map[string]bool{}
	out.Violations = append(out.Violations, fe.invariants(seed, calls, namespaces, broken)...)
	events := rt.Events()
	out.drops = countDrops(events)
	out.paths = countPaths(calls, events, func(c *runtime.CallRecord) bool {
		ns := namespaces[c.Namespace]
		if ns == nil || broken[c.Namespace] {
			return false
		}
		marks, _ := fe.methodMarks(c.Namespace, ns.Constructor())
		return marks[c.Method]
	})
	storage := endStorage(calls, namespaces) // for the timeline
	effects := rt.Effects()
	if mode.trace {
		out.trace = runText(rt.Trace(), calls, storage)
	}
	if keep {
		out.report = &render.Report{Name: "explore.Func", Seed: seed, Calls: calls, Effects: effects, Events: events, Storage: storage}
	}
	out.Violations = append(out.Violations, lateViolations...)
	if fe.opts.NoLinearizability || mode.skipLinear || runErr != nil {
		return out
	}
	view := funcView(calls, rt.History(), effects, namespaces)
	lr := checkLinear(seed, view, fe.models, fe.opts.MaxAmbiguous, broken, fe.opts.Interleaving, mode.linearTimeout)
	out.Violations = append(out.Violations, lr.violations...)
	out.Linear, out.Checked, out.Unchecked = lr.histories, lr.checked, lr.unchecked
	out.timedOut = lr.timedOut
	return out
}

// invariants checks the S invariants of calls, by the marks of each
// namespace's class, and returns the violations. A namespace whose class
// cannot be built is reported once, at its first call, and added to
// broken (made by the caller, so that it can stay on the stack).
func (fe *FuncExplorer) invariants(seed uint64, calls []runtime.CallRecord, namespaces map[string]*runtime.Namespace, broken map[string]bool) []Violation {
	var vs []Violation
	for _, c := range calls {
		ns := namespaces[c.Namespace]
		if ns == nil {
			continue
		}
		marks, err := fe.methodMarks(c.Namespace, ns.Constructor())
		if err != nil {
			if !broken[c.Namespace] {
				broken[c.Namespace] = true
				vs = append(vs, Violation{Seed: seed, Kind: KindError, Object: c.Namespace,
					Message: fmt.Sprintf("the class of namespace %s cannot be built: %v", c.Namespace, err)})
			}
			continue
		}
		vs = append(vs, recordInvariants(seed, c, marks[c.Method], c.MaxRetries, c.Timeout)...)
	}
	return vs
}

// classNamespaces is rt's namespaces by name, those with a class.
func classNamespaces(rt *runtime.Runtime) map[string]*runtime.Namespace {
	namespaces := map[string]*runtime.Namespace{}
	for _, ns := range rt.Namespaces() {
		if _, ok := namespaces[ns.Name()]; !ok && ns.Constructor() != nil {
			namespaces[ns.Name()] = ns
		}
	}
	return namespaces
}

// firedRules is the faults that fired in calls, as rules that replay them.
func firedRules(calls []runtime.CallRecord) []transport.Rule {
	var rules []transport.Rule
	for i, c := range calls {
		for _, a := range c.Attempts {
			if a.Fault != transport.None {
				rules = append(rules, transport.Rule{Call: i + 1, Method: c.Method, Attempt: a.N, Fault: a.Fault})
			}
		}
	}
	return rules
}

// endStorage is the storage, at the end of the run, of each object calls
// reached, in the order first called.
func endStorage(calls []runtime.CallRecord, namespaces map[string]*runtime.Namespace) []render.Object {
	var storage []render.Object
	listed := map[string]bool{}
	for _, c := range calls {
		ns := namespaces[c.Namespace]
		key := c.Namespace + "/" + c.Object
		if ns == nil || listed[key] {
			continue
		}
		listed[key] = true
		id := ns.IDFromName(c.Object)
		if len(c.Object) == 64 {
			if hid, err := ns.IDFromString(c.Object); err == nil {
				id = hid
			}
		}
		storage = append(storage, render.Object{Namespace: c.Namespace, Object: c.Object, Data: ns.Storage(id).Snapshot()})
	}
	return storage
}

// funcView is the run of a function's seed as the linearizability check
// reads it: each call's outcome as seen by its caller.
func funcView(calls []runtime.CallRecord, h *runtime.History, effects []runtime.Effect, namespaces map[string]*runtime.Namespace) *runView {
	view := &runView{Calls: calls, Seen: make([]seen, len(calls)), History: h, Effects: effects,
		Ctors: map[string]runtime.Constructor{}}
	for name, ns := range namespaces {
		view.Ctors[name] = ns.Constructor()
	}
	for i := range calls {
		view.Seen[i] = recordSeen(&calls[i])
	}
	return view
}

// recordSeen is what a call's caller saw, as its record says: its result,
// or the object's error; a fetch's response is filled in from its turn
// (finishCall).
func recordSeen(c *runtime.CallRecord) seen {
	switch {
	case c.Outcome == transport.OutcomeOK || c.Outcome == transport.OutcomeRecovered:
		if c.Method == "fetch" {
			return seen{known: true}
		}
		return seen{known: true, key: resultKey(c.Result, nil)}
	case c.ObjectErr != "":
		return seen{known: true, key: "err " + c.ObjectErr}
	}
	return seen{}
}

// Sweep is SweepContext with a context that is never done, an error of
// an exhaustive search (its options, a tree too large) reported as the
// summary's one violation, of kind KindError.
//
// Deprecated: use SweepContext, which returns such an error as an error
// (errors.Is(err, ErrSearchTooLarge)), not as a violation.
func (fe *FuncExplorer) Sweep() *Summary {
	sum, err := fe.SweepContext(context.Background())
	if err != nil {
		return fe.errorSummary(err)
	}
	return sum
}

// SweepContext runs the seeds of the options on their workers until ctx
// is done (or, with Options.FailFast, until a seed fails), then shrinks
// the lowest failing seed. As Explorer.SweepContext, it finishes every
// seed it handed out: an interrupted sweep has run the first Ran seeds,
// says Complete: false and shrinks nothing; one stopped by FailFast says
// Stopped and shrinks its first failing seed, the lowest. Once every seed
// ran, ctx done stops shrinking (ShrinkInterrupted). With
// Options.Exhaustive it runs the search (Exhaustive): the error is the
// search's, wrapping ErrSearchTooLarge for a tree over Options.MaxRuns.
func (fe *FuncExplorer) SweepContext(ctx context.Context) (*Summary, error) {
	o := fe.opts
	if o.Exhaustive {
		return fe.exhaustive(ctx)
	}
	sum := &Summary{Scenario: "explore.Func", First: o.First, Seeds: o.Seeds, Rates: rateNames(o.Rates), Swarm: o.Swarm, Latency: o.Latency,
		Horizon: horizon(o.Horizon, nil), RecurringAlarms: o.RecurringAlarms, Interleaving: o.Interleaving,
		MaxAmbiguous: o.MaxAmbiguous, NoLinearizability: o.NoLinearizability, NoShrink: o.NoShrink,
		MinChecked: max(o.MinChecked, 0), Shards: []Shard{{Index: 0, Count: 1}}, Violations: []Violation{}, Scheduling: fe.sched}
	var mu sync.Mutex
	seedLoop(ctx, o.Workers, o.Seeds, o.FailFast, func(k int) bool {
		seed := o.First + uint64(k)
		r := fe.check(seed, nil, checkMode{trace: o.CheckDeterminism}, false)
		if o.CheckDeterminism && (len(r.Violations) > 0 || sampled(seed)) {
			if v, ok := differs(seed, r.trace, fe.check(seed, nil, checkMode{trace: true, skipLinear: true}, false).trace); ok {
				r.Violations = append(r.Violations, v)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		sum.add(&r.SeedResult)
		if o.Progress != nil {
			o.Progress(Progress{Done: sum.Ran, Total: o.Seeds, Failed: sum.Failed, Violations: sum.Total})
		}
		return len(r.Violations) > 0
	})
	sum.Complete = sum.Ran == o.Seeds
	sum.Stopped = !sum.Complete && o.FailFast && sum.Failed > 0 && ctx.Err() == nil
	if len(sum.Violations) > 0 && (sum.Complete || sum.Stopped) {
		sum.FirstFailing = fe.failing(ctx, sum.Violations[0].Seed).orSweep(sum.Violations)
	}
	sum.seal()
	return sum, nil
}

// failing replays a failing seed and shrinks its drawn faults, as
// Explorer.Failing does for a scenario.
func (fe *FuncExplorer) failing(ctx context.Context, seed uint64) *Failing {
	r := fe.check(seed, nil, checkAll, false)
	f := &Failing{Seed: seed, Violations: r.Violations, Faults: r.Faults, Shrunk: r.Faults, Run: RunSeed}
	fe.opts.seedRun(fe.sched, seed).describe(f, fe.sched)
	if len(r.Violations) == 0 {
		return f
	}
	if fe.opts.NoShrink {
		f.Shrink = ShrinkOff
		return f
	}
	shrink(ctx, f, fe.opts, fe.now, func(rules []transport.Rule, mode checkMode) ([]Violation, bool) {
		got := fe.check(seed, rules, mode, false)
		return got.Violations, got.timedOut
	})
	if f.Run == RunShrunk {
		f.settle(fe.check(seed, append([]transport.Rule{}, f.Shrunk...), checkAll, false).Violations)
	}
	return f
}

// writeArtifacts writes, under dir, the timeline (text and HTML) of r, the
// run f's report describes, porcupine's view of each of its histories that
// failed the check, its violations, the shrunk faults and the replay
// command.
func (fe *FuncExplorer) writeArtifacts(dir string, f *Failing, r *funcSeed, cmd string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, data []byte) error {
		_, err := writeArtifact(dir, name, data)
		return err
	}
	var errs []error
	if r.report != nil {
		var tl, page, trace bytes.Buffer
		rep := *r.report
		rep.Violations = violationLines(r.Violations) // the page leads with them (rule C10)
		errs = append(errs, render.Text(&tl, rep, render.TextOptions{}), write("timeline.txt", tl.Bytes()),
			render.HTML(&page, rep), write("timeline.html", page.Bytes()),
			render.ChromeTrace(&trace, rep), write("trace.json", trace.Bytes()))
	}
	for _, v := range r.Violations {
		h := r.Linear[v.Object]
		if !ofHistory(v.Kind) || h == nil {
			continue
		}
		var b bytes.Buffer
		errs = append(errs, h.Visualize(&b),
			write(linearizabilityFile(v.Object), b.Bytes()))
	}
	var vs strings.Builder
	fmt.Fprintf(&vs, "%s violates:\n", f.RunText())
	for _, v := range r.Violations {
		vs.WriteString(v.String() + "\n")
	}
	errs = append(errs, write("violations.txt", []byte(vs.String())),
		write("faults.yaml", []byte(FaultsYAML(f.Shrunk))), write("replay.txt", []byte(cmd+"\n")))
	return errors.Join(errs...)
}
