package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"go.uber.org/zap"
)

// RunOption configures one run of a scenario.
type RunOption interface{ apply(*runConfig) }

type runConfig struct {
	classes map[string]runtime.Constructor
	seed    uint64
	faults  Faults
	extra   Faults
	logger  *zap.Logger
	replace bool
	sink    func(runtime.CallRecord)
	noCheck bool
	history bool
	horizon time.Duration
	settled func(end, now []runtime.Backlog) bool
	// stall is the watchdog's stall limit, when stallSet (StallLimit).
	stall    time.Duration
	stallSet bool
	// plan is faults' plan, made when ReplaceFaults was (a sweep makes
	// the option once and runs it for every seed; a plan is read-only).
	plan *transport.FaultPlan
	// schedule is the runtime's scheduling strategy (Schedule).
	schedule *runtime.Schedule
}

type runOptionFunc func(*runConfig)

func (f runOptionFunc) apply(c *runConfig) { f(c) }

// Seed runs the scenario with seed instead of the scenario's own.
func Seed(seed uint64) RunOption { return runOptionFunc(func(c *runConfig) { c.seed = seed }) }

// ReplaceFaults runs the scenario with f instead of its own fault plan.
// f is read when the option is made: an option made once can run many
// seeds without building the plan again.
func ReplaceFaults(f Faults) RunOption {
	plan := f.Plan()
	return runOptionFunc(func(c *runConfig) { c.faults, c.replace, c.plan = f, true, plan })
}

// AddFaults adds f to the scenario's fault plan: f's rules are matched
// before the scenario's (so they win for the attempts they match), and f's
// random rates are added to the scenario's, replacing the rate of a fault
// both name.
func AddFaults(f Faults) RunOption {
	return runOptionFunc(func(c *runConfig) {
		c.extra.Rules = append(c.extra.Rules, f.Rules...)
		if len(f.Rates) > 0 && c.extra.Rates == nil {
			c.extra.Rates = transport.Rates{}
		}
		for k, v := range f.Rates {
			c.extra.Rates[k] = v
		}
	})
}

// Class runs the namespace called namespace with ctor instead of the
// constructor its class was registered with (WithClasses), for this run
// only: to try a variant of a class, such as one with a planted bug,
// against the same scenario. The file was checked against the registered
// class, so the variant should have the same methods.
func Class(namespace string, ctor runtime.Constructor) RunOption {
	return runOptionFunc(func(c *runConfig) {
		if c.classes == nil {
			c.classes = map[string]runtime.Constructor{}
		}
		c.classes[namespace] = ctor
	})
}

// RecordSink hands fn each call's record as the call ends
// (runtime.WithRecordSink): dosim run --format jsonl streams them.
func RecordSink(fn func(runtime.CallRecord)) RunOption {
	return runOptionFunc(func(c *runConfig) { c.sink = fn })
}

// SkipExpectations runs the scenario without checking its own expectations
// (Result.Checked is 0 and Failures is empty); its explore.expect ones are
// still queried, for Result.CheckExplore. The explorer judges a run by
// those and its own checks: the file's expectations are for its own
// faults, and formatting what they missed cost every explored seed.
func SkipExpectations() RunOption { return runOptionFunc(func(c *runConfig) { c.noCheck = true }) }

// Horizon bounds the run at d of virtual time (runtime.WithHorizon: a run
// whose work goes on past it fails with a *runtime.HorizonError), then
// lets the objects' background work go on for d after the steps end
// (runtime.Quiesce) and keeps what it left in Result.Liveness (rule C8).
// The result's storage, resets and expectations are those of the end of
// the steps; its calls, effects and events, and its History (with the run
// option History), go on to the horizon: the late work is part of the run
// its checks and timeline read (rule C2, Result.StepsMade).
func Horizon(d time.Duration) RunOption { return runOptionFunc(func(c *runConfig) { c.horizon = d }) }

// Settled, with Horizon, lets the background work after the steps stop
// before the horizon: it goes on in steps (runtime.QuiesceUntil), and
// stops after one when done, given the objects' backlogs when the steps
// ended and now, says the rest need not run (the explorer: what it
// reports is certain). Result.Liveness.Ran says how long it went on.
func Settled(done func(end, now []runtime.Backlog) bool) RunOption {
	return runOptionFunc(func(c *runConfig) { c.settled = done })
}

// History keeps the history of the objects' turns (runtime.WithHistory)
// in Result.History: what the explorer's model replays.
func History() RunOption { return runOptionFunc(func(c *runConfig) { c.history = true }) }

// StallLimit sets the watchdog's wall-clock stall limit of the run's
// runtime (runtime.WithStallLimit: d <= 0 turns the watchdog off; below
// runtime.MinStallLimit, Run fails with an error that is
// runtime.ErrStallLimit). Without it the runtime's default holds
// (runtime.DefaultStallLimit).
func StallLimit(d time.Duration) RunOption {
	return runOptionFunc(func(c *runConfig) { c.stall, c.stallSet = d, true })
}

// Schedule runs the scenario with the scheduling strategy s
// (runtime.WithSchedule; default runtime.StrategyRandom).
func Schedule(s runtime.Schedule) RunOption {
	return runOptionFunc(func(c *runConfig) { c.schedule = &s })
}

// nopLogger is the default logger, made once: a run under the explorer
// cannot afford a logger of its own.
var nopLogger = zap.NewNop()

// Logger sets the runtime's logger (default zap.NewNop()).
func Logger(l *zap.Logger) RunOption { return runOptionFunc(func(c *runConfig) { c.logger = l }) }

// faultsOf combines the scenario's faults with the run's.
func (c *runConfig) faultsOf(s *Scenario) Faults {
	base := s.Faults
	if c.replace {
		base = c.faults
	}
	if len(c.extra.Rules) == 0 && len(c.extra.Rates) == 0 {
		return base
	}
	out := Faults{Rules: append(append([]transport.Rule(nil), c.extra.Rules...), base.Rules...), Latency: base.Latency}
	if len(base.Rates)+len(c.extra.Rates) > 0 {
		out.Rates = transport.Rates{}
		for k, v := range base.Rates {
			out.Rates[k] = v
		}
		for k, v := range c.extra.Rates {
			out.Rates[k] = v
		}
	}
	return out
}

// Result is what one run of a scenario did.
type Result struct {
	Scenario *Scenario // what ran
	Seed     uint64    // the seed it ran with
	// Faults is the fault plan the run used.
	Faults Faults
	// Calls are the runtime's call records, in start order.
	Calls []runtime.CallRecord
	// Effects are the side effects the objects recorded.
	Effects []runtime.Effect
	// Events are what alarms, schedules, queues and agent.Retry did.
	Events []object.Event
	// With the run option Horizon, Calls, Effects and Events go on to the
	// horizon: after what the steps made come the late work's, the calls,
	// effects and events of the alarms, schedules and queues that ran
	// after the steps ended (rule C2). StepsMade says how many of each the
	// steps made; the expectations are checked on those.
	StepsMade StepCounts
	// Storage is the storage of every object a stub names, at the end, in
	// the order of the stubs (an object named twice is listed once).
	Storage []render.Object
	// Resets counts the resets of each object a stub names, by namespace
	// and object name (rule L3); an object never reset has no entry.
	Resets map[[2]string]int
	// sql holds what each SQL expectation's query returned.
	sql map[*Expectation]sqlAnswer
	// Outcomes holds, for each of the scenario's calls (Scenario.Calls
	// order), which records it made and what it returned.
	Outcomes []CallResult
	// Received holds what each receive step got, in the order they ran.
	Received []Received
	// Checked counts the expectations checked; Failures lists those not met.
	Checked  int
	Failures []Failure // in the order of the file
	// History is the objects' turns, with the run option History (nil
	// without).
	History *runtime.History
	// Liveness is what background work did after the steps, with the run
	// option Horizon (nil without).
	Liveness *Liveness

	rt *runtime.Runtime
}

// StepCounts says how many of a Result's calls, effects and events the
// scenario's steps made: the rest are the late work's (the run option
// Horizon).
type StepCounts struct{ Calls, Effects, Events int }

// stepEffects are the effects the steps made, which the expectations
// count.
func (r *Result) stepEffects() []runtime.Effect { return r.Effects[:r.StepsMade.Effects] }

// CallResult is what one scenario call did: the call records it made (one
// per attempt of its application loop, as indexes into Result.Calls), and
// the last one's result, error, and for a fetch the response.
type CallResult struct {
	Call    *Call   // the scenario's call
	Records []int   // indexes into Result.Calls, one per call of its outer loop
	Value   any     // the last call's result (a copy)
	Err     error   // the last call's error, a *stub.Error for failed attempts
	Errs    []error // each call's error (same index as Records), nil for a success
	Status  int     // a fetch's response status
	Body    string  // a fetch's response body
}

// Passed reports whether every expectation was met.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

// Trace returns the runtime's trace: every call, attempt and effect, with
// full request identities (rule D1: the same seed gives the same bytes).
func (r *Result) Trace() string { return r.rt.Trace() }

// Steps returns how many steps the run took (runtime.Runtime.Steps).
func (r *Result) Steps() uint64 { return r.rt.Steps() }

// Callers returns the objects ("NAMESPACE/object") whose methods made calls
// of their own during the run (runtime.Runtime.Callers).
func (r *Result) Callers() []string { return r.rt.Callers() }

// Labels says what each call record was (same index as Calls): the
// scenario call's label, with the application loop's attempt when it made
// more than one.
func (r *Result) Labels() []string {
	out := make([]string, len(r.Calls))
	for _, o := range r.Outcomes {
		for k, idx := range o.Records {
			l := o.Call.label
			if o.Call.Outer > 1 {
				l += fmt.Sprintf(" [outer %d/%d]", k+1, o.Call.Outer)
			}
			out[idx] = l
		}
	}
	return out
}

// Report returns the run as the renderers show it.
func (r *Result) Report() render.Report {
	failures := make([]render.Failure, len(r.Failures))
	for i, f := range r.Failures {
		failures[i] = render.Failure{Where: f.Where(), Want: f.Want, Got: f.Got}
	}
	return render.Report{
		Name: r.Scenario.Name, File: r.Scenario.File, Description: r.Scenario.Description, Seed: r.Seed,
		Calls: r.Calls, Labels: r.Labels(), Effects: r.Effects, Events: r.Events, Storage: r.Storage,
		Expectations: r.Checked, Failures: failures,
	}
}

func (r *Result) storageOf(s *Stub) map[string]any {
	for _, o := range r.Storage {
		if o.Namespace == s.Namespace.Name && o.Object == s.Object {
			return o.Data
		}
	}
	return nil
}

// ErrRun is wrapped by the error Run returns when the simulation itself
// failed (a deadlock, a panic outside an object method): not an
// expectation, a bug in dosim or in a class.
var ErrRun = errors.New("the simulation failed")

// Run runs the scenario once, in a runtime of its own that is closed before
// Run returns, and checks its expectations. Unmet expectations are in the
// Result's Failures; the error is for a simulation that could not run.
func (s *Scenario) Run(opts ...RunOption) (*Result, error) {
	cfg := runConfig{seed: s.Seed, logger: nopLogger}
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	faults := cfg.faultsOf(s)
	plan := cfg.plan
	if !cfg.replace || len(cfg.extra.Rules) > 0 || len(cfg.extra.Rates) > 0 {
		plan = faults.Plan()
	}
	if err := plan.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.File, err)
	}
	rt := runtime.New(s.runtimeOptions(&cfg, plan)...)
	defer rt.Close()
	res := &Result{Scenario: s, Seed: cfg.seed, Faults: faults, Outcomes: make([]CallResult, len(s.calls)), rt: rt}
	run, err := s.runner(rt, res, &cfg)
	if err != nil {
		return nil, err
	}
	err = rt.Run(func(ctx context.Context) error {
		for _, step := range s.Steps {
			if err := run.step(ctx, step); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s (seed %d): %w", ErrRun, s.File, cfg.seed, err)
	}
	res.Calls = rt.Calls()
	if len(res.Calls) < run.seq {
		return nil, fmt.Errorf("%w: %s (seed %d): %d call records for %d calls made", ErrRun, s.File, cfg.seed, len(res.Calls), run.seq)
	}
	res.Effects = rt.Effects()
	res.Events = rt.Events()
	res.StepsMade = StepCounts{Calls: len(res.Calls), Effects: len(res.Effects), Events: len(res.Events)}
	later := cfg.horizon > 0 && rt.BackgroundPending() // work goes on after the steps
	if !later {
		res.History = rt.History() // its end states serve as the storage too
	}
	run.storage()
	if !cfg.noCheck {
		res.querySQL(run.nss, s.Expect)
	}
	res.querySQL(run.nss, s.Explore.Expect)
	if cfg.horizon > 0 {
		res.goOn(rt, &cfg, later)
	}
	if !cfg.noCheck {
		res.check()
	}
	return res, nil
}

// runtimeOptions are the options of a run's runtime.
func (s *Scenario) runtimeOptions(cfg *runConfig, plan *transport.FaultPlan) []runtime.Option {
	ropts := make([]runtime.Option, 0, 8)
	ropts = append(ropts, runtime.WithSeed(cfg.seed), runtime.WithFaults(plan), runtime.WithLogger(cfg.logger),
		runtime.WithEviction(!s.NoEviction), runtime.WithRecordSink(cfg.sink), runtime.WithHorizon(cfg.horizon))
	if cfg.history {
		ropts = append(ropts, runtime.WithHistory())
	}
	if cfg.stallSet {
		ropts = append(ropts, runtime.WithStallLimit(cfg.stall))
	}
	if cfg.schedule != nil && *cfg.schedule != (runtime.Schedule{}) {
		ropts = append(ropts, runtime.WithSchedule(*cfg.schedule))
	}
	return ropts
}

// goOn lets the objects' background work go on after the steps, to the
// horizon (the run option Horizon, rule C8), when there is some (later),
// and keeps what it did: the late work is the run's as much as the
// steps' (rule C2), its calls, effects and events after theirs.
func (res *Result) goOn(rt *runtime.Runtime, cfg *runConfig, later bool) {
	lv := &Liveness{Horizon: cfg.horizon, End: rt.Backlogs()}
	res.Liveness = lv
	if later {
		var done func([]runtime.Backlog) bool
		if cfg.settled != nil {
			done = func(now []runtime.Backlog) bool { return cfg.settled(lv.End, now) }
		}
		lv.Ran, lv.Err = rt.QuiesceUntil(cfg.horizon, done)
		res.History = rt.History()
		res.Calls, res.Effects, res.Events = rt.Calls(), rt.Effects(), rt.Events()
	}
	lv.After = rt.Backlogs()
}

// runner makes the run's namespaces and its stubs.
func (s *Scenario) runner(rt *runtime.Runtime, res *Result, cfg *runConfig) (*runner, error) {
	nss := make(map[*Namespace]*runtime.Namespace, len(s.Namespaces))
	for _, ns := range s.Namespaces {
		ctor := ns.Class.New
		if c, ok := cfg.classes[ns.Name]; ok && c != nil {
			ctor = c
		}
		nss[ns] = rt.Namespace(ns.Name, ctor, ns.Options()...)
	}
	stubs := make(map[*Stub]*stub.Stub, len(s.Stubs))
	ids := make(map[*Stub]object.ID, len(s.Stubs))
	for _, st := range s.Stubs {
		ids[st] = nss[st.Namespace].IDFromName(st.Object)
		h, err := nss[st.Namespace].Get(ids[st], st.Options...)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: stub %s: %w", ErrRun, s.File, st.Name, err)
		}
		stubs[st] = h
	}
	return &runner{rt: rt, res: res, stubs: stubs, ids: ids, nss: nss}, nil
}

// storage fills the result's storage and resets of the objects the
// stubs name, each once, in the order of the stubs.
func (r *runner) storage() {
	res, s := r.res, r.res.Scenario
	if len(s.Stubs) > 0 {
		res.Storage = make([]render.Object, 0, len(s.Stubs))
	}
	for _, st := range s.Stubs {
		key := [2]string{st.Namespace.Name, st.Object}
		if slices.ContainsFunc(res.Storage, func(o render.Object) bool { return o.Namespace == key[0] && o.Object == key[1] }) {
			continue // an object named twice is listed once
		}
		ns, id := r.nss[st.Namespace], r.ids[st]
		// The history's end state serves, but for SQL tables: it keeps
		// their rows in rowid order with their rowids, for replays, where
		// a timeline shows them as Snapshot does.
		data, ok := res.History.FinalStorage(st.Namespace.Name, st.Object)
		if !ok || ns.Storage(id).HasSQL() {
			data = ns.Storage(id).Snapshot()
		}
		res.Storage = append(res.Storage, render.Object{Namespace: st.Namespace.Name, Object: st.Object, Data: data})
		if n := ns.Resets(id); n > 0 {
			if res.Resets == nil {
				res.Resets = map[[2]string]int{}
			}
			res.Resets[key] = n
		}
	}
}

// Liveness is what the objects' background work did after a run, to the
// horizon (the run option Horizon, rule C8).
type Liveness struct {
	// Horizon is how long after the run the background work could go on;
	// Ran how long it did: less when nothing was left, or when the run
	// option Settled stopped it.
	Horizon, Ran time.Duration
	// End and After are each object's background work when the run ended
	// and at the horizon.
	End, After []runtime.Backlog
	// Err is a *runtime.HorizonError when work that keeps a run going (a
	// queue) was still pending at the horizon.
	Err error
}

// runner makes a scenario's calls inside the simulation.
type runner struct {
	rt    *runtime.Runtime
	res   *Result
	stubs map[*Stub]*stub.Stub // the stubs minted before the run; used by every call only when Reuse
	ids   map[*Stub]object.ID  // each stub's object, named once (IDFromName hashes)
	nss   map[*Namespace]*runtime.Namespace
	seq   int // call records begun so far: the next call's record index
	// sockets are the client ends the run's fetches opened, by name.
	sockets map[string]*object.WebSocket
}

// stub returns the stub a call through st goes through: the run's one
// stub when st says reuse, otherwise a fresh one (rule L2: a stub a failure
// broke is not used again).
func (r *runner) stub(st *Stub) (*stub.Stub, error) {
	if st.Reuse {
		return r.stubs[st], nil
	}
	return r.nss[st.Namespace].Get(r.ids[st], st.Options...)
}

func (r *runner) step(ctx context.Context, st *Step) error {
	switch {
	case st.Socket != nil:
		return r.socket(ctx, st.Socket)
	case len(st.Calls) == 0:
		return r.rt.Sleep(ctx, st.Sleep)
	case !st.Concurrent:
		return r.call(ctx, st.Calls[0])
	}
	g := r.rt.Group(ctx)
	for _, c := range st.Calls {
		g.Go(func(ctx context.Context) error { return r.call(ctx, c) })
	}
	return g.Wait()
}

// call makes one scenario call, within its application loop. The call's
// failure is an outcome, not an error: only the simulation's own failures
// are returned.
func (r *runner) call(ctx context.Context, c *Call) error {
	if c.HasAt {
		if now := r.rt.Elapsed(); now < c.At {
			if err := r.rt.Sleep(ctx, c.At-now); err != nil {
				return err
			}
		}
	}
	out := &r.res.Outcomes[c.Index]
	out.Call = c
	for k := 0; k < c.Outer; k++ {
		s, err := r.stub(c.Stub)
		if err != nil {
			return fmt.Errorf("%s: stub %s: %w", c.Path, c.Stub.Name, err)
		}
		// No task runs between here and the stub registering its record:
		// the record's index is the number of calls begun so far, the
		// calls objects made to other objects included.
		out.Records = append(out.Records, r.rt.CallsBegun())
		r.seq++
		out.Value, out.Err, out.Status, out.Body = nil, nil, 0, ""
		if c.Fetch != nil {
			req, err := c.Fetch.Request()
			if err != nil {
				return fmt.Errorf("%s: building the request: %w", c.Path, err)
			}
			resp, err := s.Fetch(ctx, req.WithContext(ctx))
			out.Err = err
			if resp != nil && c.Fetch.WebSocket != "" {
				r.opened(c.Fetch.WebSocket, resp)
			}
			if resp != nil {
				out.Status = resp.StatusCode
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				out.Body = string(b)
			}
		} else {
			out.Value, out.Err = s.Call(ctx, c.Method, c.Args...)
		}
		out.Errs = append(out.Errs, out.Err)
		if out.Err == nil {
			break
		}
	}
	return nil
}
