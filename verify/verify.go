// Package verify proves that methods marked object.Retryable are safe to run
// twice, and finds unmarked methods that could be marked.
//
// For one method and its arguments, Idempotent starts from one storage
// snapshot and runs the method once in one runtime and, in another, twice:
// the second run a duplicate delivery of the same request, exactly as the
// stub's retry after a lost reply brings it. It then compares what the
// caller got, what storage holds, the side effects recorded with
// State.Effect and what the instance keeps in its fields. A marked method
// whose two worlds differ is dangerous: a retry changes the outcome. An
// unmarked method whose worlds agree could be marked.
//
// The class runs as it is (rule C6): its own constructor builds the
// instance, so every optional interface the runtime looks for on it works
// under the check (object.Alarmer for State.SetAlarm, agent.ErrorHandler,
// agent.RetryDefaulter, http.Handler). To run an unmarked method again on
// the duplicate, the verifier's namespace is defined with
// runtime.RerunDuplicates, not by wrapping the class.
//
// A check is inconclusive, never ok, when the comparison would prove
// nothing: the object was reset during the call (a failed
// BlockConcurrencyWhile, a storage failure), the duplicate did not run, or
// the call failed in both runs (two errors agreeing say nothing of what the
// method does when it works). Both worlds keep the error the caller got.
//
// Configuration is an options struct (Options), whose zero value is the
// default in every field, as explore.Options and amplify.Options are.
//
// What the worlds do not compare: the object's pending alarm (the runtime
// keeps it outside storage), and background work (alarms, schedules) that
// falls due after the call returned, which does not run.
//
// dosimtest.Verify wraps it for go test; this package imports no testing
// code, so the dosim command links it as a plain library.
package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/fields"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// Verdicts, as Report.Verdict spells them.
const (
	VerdictOK            = "ok"
	VerdictDanger        = "DANGER: marked but not idempotent"
	VerdictCouldBeMarked = "could be marked"
	VerdictInconclusive  = "inconclusive"
)

// Why a check was inconclusive, as Report.Reason spells it.
const (
	// ReasonReset: the object was reset during the call, in either run.
	ReasonReset = "the object was reset"
	// ReasonNoRerun: the duplicate delivery did not run the method.
	ReasonNoRerun = "the duplicate did not run"
	// ReasonBothFailed: the call failed in both runs.
	ReasonBothFailed = "both runs failed"
	// ReasonUnsettled: the call's work was still going on at the horizon.
	ReasonUnsettled = "its work never settled"
)

// Report is what Idempotent found for one method.
type Report struct {
	Class      string // the namespace's name
	Method     string
	Args       []any
	Marked     bool // marked object.Retryable
	Idempotent bool // running it twice left the same world as once; false when inconclusive
	Verdict    string
	// Reason is, for an inconclusive check, why in a few words (one of the
	// Reason constants); empty otherwise.
	Reason string
	// Diff says, for a person, how twice differed from once (empty when
	// they agree), or, for an inconclusive check, why nothing could be
	// concluded, with the errors.
	Diff string
	// Once and Twice are the two worlds compared.
	Once, Twice World
}

// World is what one run left behind.
type World struct {
	Result any
	// Err is the error the caller got ("" when the call succeeded): the
	// object's own error, or the reset's message.
	Err string
	// Reset says the object was reset during the call (rule L3).
	Reset bool
	// Unsettled, when set, says the work the call started (a queue, a
	// sleep) was still going on at the horizon (Horizon): the run was cut
	// there.
	Unsettled string
	Storage   map[string]any
	// Bound is the storage of the other objects the call reached (through
	// runtime.Binding), by "NAMESPACE/object": a method that charges a
	// billing object twice when run twice is not idempotent either.
	Bound   map[string]map[string]any
	Effects []Effect
	// Memory is what the instance keeps in its fields after the call, as
	// text (a rate limiter's tokens): "" for a class that keeps nothing
	// there. A method that changes it twice where once changes it once
	// is not idempotent either.
	Memory string
	Runs   int // how many times the method ran
}

// Failed reports whether the caller got an error.
func (w World) Failed() bool { return w.Err != "" }

// Effect is a side effect, without its timing and request identity.
type Effect struct {
	Kind    string
	Payload any
}

// Options tunes a check.
type Options struct {
	// Seed of both runtimes (default 1).
	Seed uint64
	// Snapshot is the storage the object starts from (default empty).
	Snapshot map[string]any
	// Horizon bounds each run in virtual time (default Horizon): the work
	// of a call that never settles (a queue that keeps filling itself) is
	// cut there, and the check is inconclusive.
	Horizon time.Duration
	// StallLimit is the watchdog's wall-clock stall limit of both runs
	// (runtime.WithStallLimit): 0 takes runtime.DefaultStallLimit, a
	// negative value turns the watchdog off.
	StallLimit time.Duration
}

// Horizon is how long in virtual time a run of the check may take, unless
// Options.Horizon says.
const Horizon = 24 * time.Hour

// ErrVerify is wrapped by errors that kept a check from running: an
// unknown method, arguments that do not fit, a class that cannot be built,
// a run that failed outside the method's turn. What the method itself does
// (an error, a panic, a reset) is a verdict, not an error.
var ErrVerify = errors.New("verify")

// Idempotent checks method of ns's class with args.
func Idempotent(ns *runtime.Namespace, method string, args []any, opts Options) (Report, error) {
	rep := Report{Class: ns.Name(), Method: method, Args: args}
	if ns.Err() != nil {
		return rep, fmt.Errorf("%w: %w", ErrVerify, ns.Err())
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	marked, err := isMarked(ns, method)
	if err != nil {
		return rep, err
	}
	rep.Marked = marked
	if rep.Once, err = world(ns, method, args, opts, false); err != nil {
		return rep, err
	}
	if rep.Twice, err = world(ns, method, args, opts, true); err != nil {
		return rep, err
	}
	judge(&rep)
	return rep, nil
}

// judge gives rep its verdict from its two worlds.
func judge(rep *Report) {
	once, twice := rep.Once, rep.Twice
	inconclusive := func(reason, why string) {
		rep.Verdict, rep.Reason, rep.Idempotent, rep.Diff = VerdictInconclusive, reason, false, why
	}
	switch {
	case once.Unsettled != "" || twice.Unsettled != "":
		inconclusive(ReasonUnsettled, fmt.Sprintf("the work the call started was still going on at the horizon (%s): a run that never ends cannot be compared\n",
			cmp.Or(once.Unsettled, twice.Unsettled)))
		return
	case once.Reset || twice.Reset:
		inconclusive(ReasonReset, fmt.Sprintf("the object was reset during the call (%s): a reset fails the call whatever the method did, so once and twice cannot be compared\n",
			failures(once, twice)))
		return
	case twice.Runs < 2:
		inconclusive(ReasonNoRerun, fmt.Sprintf("the duplicate delivery did not run the method (it ran %d time(s)); a method slower than the 60 s deadline cannot be retried\n", twice.Runs))
		return
	}
	result, state := diffResult(once, twice), diffState(once, twice)
	rep.Diff = result + state
	rep.Idempotent = rep.Diff == ""
	switch {
	case once.Failed() && twice.Failed() && !(rep.Marked && state != ""):
		// Two failures prove nothing, unless storage or effects show that
		// running twice did more than once: a marked method is then
		// dangerous whatever it answered.
		inconclusive(ReasonBothFailed, fmt.Sprintf("the call failed in both runs (%s): a failing call shows nothing of what the method does when it works, so the check proves nothing; call it with arguments and storage under which it succeeds\n%s",
			failures(once, twice), rep.Diff))
	case rep.Marked && !rep.Idempotent:
		rep.Verdict = VerdictDanger
	case !rep.Marked && rep.Idempotent:
		rep.Verdict = VerdictCouldBeMarked
	default:
		rep.Verdict = VerdictOK
	}
}

// failures says which runs failed, and with what: "once: ERR; twice: ERR".
func failures(once, twice World) string {
	var parts []string
	for _, w := range []struct {
		name string
		w    World
	}{{"once", once}, {"twice", twice}} {
		if w.w.Failed() {
			parts = append(parts, w.name+": "+w.w.Err)
		}
	}
	if len(parts) == 0 {
		return "no error"
	}
	return strings.Join(parts, "; ")
}

// isMarked builds a throwaway instance to read the method's mark.
func isMarked(ns *runtime.Namespace, method string) (bool, error) {
	rt := runtime.New()
	defer rt.Close()
	probe := rt.Namespace(ns.Name(), ns.Constructor(), definedAs(ns)...)
	bindings(rt, ns)
	ms, err := probe.Methods(probe.IDFromName("verify"))
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrVerify, err)
	}
	m, ok := ms[method]
	if !ok {
		return false, fmt.Errorf("%w: %s has no method %q (it has %s)", ErrVerify, ns.Name(), method, strings.Join(slices.Sorted(maps.Keys(ms)), ", "))
	}
	return m.IsRetryable(), nil
}

// bindings defines in rt, fresh, the other namespaces of ns's runtime, as
// they are defined there: what the class finds with runtime.Binding. A
// marked method that calls another object is judged with that object's
// writes and effects in the world (rule C6).
func bindings(rt *runtime.Runtime, ns *runtime.Namespace) {
	for _, other := range ns.Runtime().Namespaces() {
		if other == ns || other.Err() != nil {
			continue
		}
		rt.Namespace(other.Name(), other.Constructor(), definedAs(other)...)
	}
}

// definedAs are the options that define a namespace as ns is defined: its
// storage and its bindings.
func definedAs(ns *runtime.Namespace) []runtime.NamespaceOption {
	var opts []runtime.NamespaceOption
	for b, n := range ns.Bindings() {
		opts = append(opts, runtime.WithBinding(b, n))
	}
	if ns.Backend() == object.KeyValueBacked {
		opts = append(opts, runtime.KeyValueBacked())
	}
	return opts
}

// asItIs defines ns's class in rt as it is, built by its own constructor
// (rule C6): its instances keep every optional interface. The namespace
// runs every duplicate delivery again, marked or not.
func asItIs(rt *runtime.Runtime, ns *runtime.Namespace) *runtime.Namespace {
	return rt.Namespace(ns.Name(), ns.Constructor(), append(definedAs(ns), runtime.RerunDuplicates())...)
}

// world runs the method once, or twice (a lost reply, then the duplicate
// delivery of the same request), in a fresh runtime.
func world(ns *runtime.Namespace, method string, args []any, opts Options, twice bool) (World, error) {
	var plan *transport.FaultPlan
	if twice {
		plan = transport.Plan(transport.Rule{Namespace: ns.Name(), Method: method, Attempt: 1, Fault: transport.LoseResponse})
	}
	rt := runtime.New(runtime.WithSeed(opts.Seed), runtime.WithFaults(plan), runtime.WithHorizon(cmp.Or(opts.Horizon, Horizon)),
		runtime.WithStallLimit(cmp.Or(opts.StallLimit, runtime.DefaultStallLimit)))
	defer rt.Close()
	inner := asItIs(rt, ns)
	bindings(rt, ns)
	id := inner.IDFromName("verify")
	if err := inner.Storage(id).Restore(opts.Snapshot); err != nil {
		return World{}, fmt.Errorf("%w: snapshot: %w", ErrVerify, err)
	}
	s, err := inner.Get(id, stub.MaxRetries(1), stub.TimeoutMs(stub.MaxTimeoutMs))
	if err != nil {
		return World{}, fmt.Errorf("%w: %w", ErrVerify, err)
	}
	var w World
	err = rt.Run(func(ctx context.Context) error {
		v, err := s.Call(ctx, method, args...)
		w.Result = v
		var e *stub.Error
		switch {
		case err == nil:
		case errors.As(err, &e) && e.DurableObjectReset:
			w.Err, w.Reset = e.Msg, true // the reset's message (rule L3)
		case errors.As(err, &e) && e.Remote:
			w.Err = e.Msg // the object's error, without the attempt it came from
		case errors.As(err, &e) && e.Retryable:
			w.Err = e.Msg
		default:
			return err // the call itself is wrong (unknown method, bad arguments)
		}
		return nil
	})
	if errors.Is(err, runtime.ErrHorizon) {
		w.Unsettled, err = err.Error(), nil
	}
	if err != nil {
		return World{}, fmt.Errorf("%w: %s.%s: %w", ErrVerify, ns.Name(), method, err)
	}
	w.Storage = inner.Storage(id).Snapshot()
	w.Bound = boundStorage(rt, inner)
	if inst := inner.Instance(id); inst != nil {
		w.Memory = fields.Text(inst)
	}
	for _, e := range rt.Effects() {
		w.Effects = append(w.Effects, Effect{Kind: e.Kind, Payload: e.Payload})
	}
	if calls := rt.Calls(); len(calls) > 0 {
		w.Runs = calls[0].Executions()
	}
	return w, nil
}

// diffResult says how the caller's answer differs twice from once, or ""
// if it does not.
func diffResult(once, twice World) string {
	if reflect.DeepEqual(once.Result, twice.Result) && once.Err == twice.Err {
		return ""
	}
	return fmt.Sprintf("result: once %s, twice %s\n", show(once.Result, once.Err), show(twice.Result, twice.Err))
}

// diffState says how storage and effects differ twice from once, or "" if
// they do not.
func diffState(once, twice World) string {
	var b strings.Builder
	diffStorage(&b, "storage", once.Storage, twice.Storage)
	objects := map[string]bool{}
	for o := range once.Bound {
		objects[o] = true
	}
	for o := range twice.Bound {
		objects[o] = true
	}
	for _, o := range slices.Sorted(maps.Keys(objects)) {
		diffStorage(&b, o+" storage", once.Bound[o], twice.Bound[o])
	}
	if !reflect.DeepEqual(once.Effects, twice.Effects) {
		fmt.Fprintf(&b, "effects: once %s, twice %s\n", effects(once.Effects), effects(twice.Effects))
	}
	if once.Memory != twice.Memory {
		fmt.Fprintf(&b, "memory: once %s, twice %s\n", once.Memory, twice.Memory)
	}
	return b.String()
}

// diffStorage writes how two snapshots differ, key by key, each line led
// by what.
func diffStorage(b *strings.Builder, what string, once, twice map[string]any) {
	keys := map[string]bool{}
	for k := range once {
		keys[k] = true
	}
	for k := range twice {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		a, inA := once[k]
		c, inB := twice[k]
		switch {
		case inA && !inB:
			fmt.Fprintf(b, "%s %q: once %#v, twice absent\n", what, k, a)
		case !inA && inB:
			fmt.Fprintf(b, "%s %q: once absent, twice %#v\n", what, k, c)
		case !reflect.DeepEqual(a, c):
			fmt.Fprintf(b, "%s %q: once %#v, twice %#v\n", what, k, a, c)
		}
	}
}

// boundStorage is the storage of every object of rt's other namespaces a
// call reached, by "NAMESPACE/object" (World.Bound); nil when none.
func boundStorage(rt *runtime.Runtime, inner *runtime.Namespace) map[string]map[string]any {
	var out map[string]map[string]any
	for _, c := range rt.Calls() {
		if c.Namespace == inner.Name() {
			continue
		}
		key := c.Namespace + "/" + c.Object
		if _, done := out[key]; done {
			continue
		}
		for _, ns := range rt.Namespaces() {
			if ns.Name() != c.Namespace {
				continue
			}
			id := ns.IDFromName(c.Object)
			if hid, err := ns.IDFromString(c.Object); err == nil {
				id = hid
			}
			if out == nil {
				out = map[string]map[string]any{}
			}
			out[key] = ns.Storage(id).Snapshot()
		}
	}
	return out
}

func show(v any, err string) string {
	if err != "" {
		return "error " + err
	}
	return fmt.Sprintf("%#v", v)
}

func effects(es []Effect) string {
	if len(es) == 0 {
		return "none"
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s %v", e.Kind, e.Payload)
	}
	return fmt.Sprintf("%d [%s]", len(es), strings.Join(parts, "; "))
}
