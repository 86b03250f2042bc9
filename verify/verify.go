// Package verify proves that methods marked object.Retryable are safe to run
// twice, and finds unmarked methods that could be marked.
//
// For one method and its arguments, Idempotent starts from one storage
// snapshot and runs the method once in one runtime and, in another, twice:
// the second run a duplicate delivery of the same request, exactly as the
// stub's retry after a lost reply brings it. It then compares what the
// caller got, what storage holds, and the side effects recorded with
// State.Effect. A marked method whose two worlds differ is dangerous: a
// retry changes the outcome. An unmarked method whose worlds agree could be
// marked.
//
// Test wraps it for go test, beside it as httptest is beside net/http.
package verify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

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

// Report is what Idempotent found for one method.
type Report struct {
	Class      string // the namespace's name
	Method     string
	Args       []any
	Marked     bool // marked object.Retryable
	Idempotent bool // running it twice left the same world as once
	Verdict    string
	// Diff says, for a person, how twice differed from once (empty when
	// they agree), or why the check was inconclusive.
	Diff string
	// Once and Twice are the two worlds compared.
	Once, Twice World
}

// World is what one run left behind.
type World struct {
	Result  any
	Err     string
	Storage map[string]any
	Effects []Effect
	Runs    int // how many times the method ran
}

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
}

// ErrVerify is wrapped by errors that kept a check from running.
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
	if rep.Twice.Runs < 2 {
		rep.Verdict = VerdictInconclusive
		rep.Diff = fmt.Sprintf("the duplicate delivery did not run the method (it ran %d time(s)); a method slower than the 60 s deadline cannot be retried", rep.Twice.Runs)
		return rep, nil
	}
	rep.Diff = diff(rep.Once, rep.Twice)
	rep.Idempotent = rep.Diff == ""
	switch {
	case marked && !rep.Idempotent:
		rep.Verdict = VerdictDanger
	case !marked && rep.Idempotent:
		rep.Verdict = VerdictCouldBeMarked
	default:
		rep.Verdict = VerdictOK
	}
	return rep, nil
}

// isMarked builds a throwaway instance to read the method's mark.
func isMarked(ns *runtime.Namespace, method string) (bool, error) {
	rt := runtime.New()
	defer rt.Close()
	probe := rt.Namespace(ns.Name(), ns.Constructor())
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

// allMarked wraps a class so that every method is marked: a duplicate
// delivery then runs it again, whatever its own mark says.
type allMarked struct{ object.Object }

func (a allMarked) Methods() object.Methods {
	ms := a.Object.Methods()
	out := make(object.Methods, len(ms))
	for n, m := range ms {
		out[n] = object.Retryable(m.Fn())
	}
	return out
}

// world runs the method once, or twice (a lost reply, then the duplicate
// delivery of the same request), in a fresh runtime.
func world(ns *runtime.Namespace, method string, args []any, opts Options, twice bool) (World, error) {
	var plan *transport.FaultPlan
	if twice {
		plan = transport.Plan(transport.Rule{Method: method, Attempt: 1, Fault: transport.LoseResponse})
	}
	rt := runtime.New(runtime.WithSeed(opts.Seed), runtime.WithFaults(plan))
	defer rt.Close()
	ctor := ns.Constructor()
	inner := rt.Namespace(ns.Name(), func(st *object.State) object.Object {
		obj := ctor(st)
		if obj == nil {
			return nil
		}
		return allMarked{obj}
	})
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
		case errors.As(err, &e) && e.Remote:
			w.Err = e.Msg // the object's error, without the attempt it came from
		case errors.As(err, &e) && e.Retryable:
			w.Err = e.Msg
		default:
			return err // the call itself is wrong (unknown method, bad arguments)
		}
		return nil
	})
	if err != nil {
		return World{}, fmt.Errorf("%w: %s.%s: %w", ErrVerify, ns.Name(), method, err)
	}
	w.Storage = inner.Storage(id).Snapshot()
	for _, e := range rt.Effects() {
		w.Effects = append(w.Effects, Effect{Kind: e.Kind, Payload: e.Payload})
	}
	if calls := rt.Calls(); len(calls) > 0 {
		w.Runs = calls[0].Executions()
	}
	return w, nil
}

// diff says how twice differs from once, or "" if it does not.
func diff(once, twice World) string {
	var b strings.Builder
	if !reflect.DeepEqual(once.Result, twice.Result) || once.Err != twice.Err {
		fmt.Fprintf(&b, "result: once %s, twice %s\n", show(once.Result, once.Err), show(twice.Result, twice.Err))
	}
	keys := map[string]bool{}
	for k := range once.Storage {
		keys[k] = true
	}
	for k := range twice.Storage {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		a, inA := once.Storage[k]
		c, inB := twice.Storage[k]
		switch {
		case inA && !inB:
			fmt.Fprintf(&b, "storage %q: once %#v, twice absent\n", k, a)
		case !inA && inB:
			fmt.Fprintf(&b, "storage %q: once absent, twice %#v\n", k, c)
		case !reflect.DeepEqual(a, c):
			fmt.Fprintf(&b, "storage %q: once %#v, twice %#v\n", k, a, c)
		}
	}
	if !reflect.DeepEqual(once.Effects, twice.Effects) {
		fmt.Fprintf(&b, "effects: once %s, twice %s\n", effects(once.Effects), effects(twice.Effects))
	}
	return b.String()
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
