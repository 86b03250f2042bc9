package runtime

// What a turn calls: the method of the object's class (looked up once and
// kept compiled), or its fetch handler, with the arguments copied in and
// the result copied out (rules O5, S11), and the RPC-session rule (S12).

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/invoke"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
)

// lookup returns the compiled method f calls: the instance's, compiled
// once (a pointer: a compiled method is large), or an RPC target's.
func (h *host) lookup(f *flight) (*compiled, error) {
	if rpc := f.RPC; rpc != nil {
		if st, ok := rpc.(*sessionTarget); ok {
			rpc = st.Target
		}
		c, err := find(fmt.Sprintf("%T", rpc), rpc.Methods(), f.Req.Method)
		return &c, asRPC(err)
	}
	name := f.Req.Method
	for _, c := range h.compiled {
		if c.fn.Name == name {
			return c, nil
		}
	}
	c, err := find(h.ns.name, h.methods, name)
	if err == nil && len(h.compiled) < maxCompiled {
		h.compiled = append(h.compiled, &c)
	}
	return &c, asRPC(err)
}

// maxCompiled is how many methods of an instance a host keeps compiled.
const maxCompiled = 16

// find returns the checked method name of ms.
func find(class string, ms object.Methods, name string) (compiled, error) {
	m, ok := ms[name]
	if !ok {
		return compiled{}, &noMethodError{class: class, method: name, has: slices.Sorted(maps.Keys(ms))}
	}
	fn, err := invoke.Compile(name, m.Fn())
	if err != nil {
		return compiled{}, fmt.Errorf("%w: %s: %w", ErrSetup, class, err)
	}
	return compiled{fn: fn, retryable: m.IsRetryable()}, nil
}

// checkMethods checks every method's signature, and fails on the first
// bad one in name order, naming it. (It runs for every instance built: it
// sorts no names when all are good.)
func checkMethods(class string, ms object.Methods) error {
	var bad string
	var first error
	for n, m := range ms {
		if _, err := invoke.Compile(n, m.Fn()); err != nil && (first == nil || n < bad) {
			bad, first = n, err
		}
	}
	if first != nil {
		return fmt.Errorf("%w: %s: %w", ErrSetup, class, first)
	}
	return nil
}

// asRPC words err as the caller of an RPC method sees it: a missing
// method in the platform's words (noMethodError).
func asRPC(err error) error {
	if e, ok := err.(*noMethodError); ok {
		cp := *e
		cp.rpc = true
		return &cp
	}
	return err
}

func (h *host) lookupFetch(f *flight) (*compiled, error) {
	if f.Req.HTTP == nil {
		return h.lookup(f)
	}
	if h.handler == nil {
		return nil, fmt.Errorf("%w: %s objects do not implement http.Handler, so they cannot serve Fetch", object.ErrNoMethod, h.ns.name)
	}
	return &fetchHandler, nil
}

// fetchHandler is what lookupFetch finds for a fetch: no method, and
// never marked retryable (S6).
var fetchHandler compiled

// deliveryArgs gives one delivery its own copy of the request's arguments,
// as a new deserialization of the same bytes would (rule O5): a method
// that changes an argument cannot change what a retry of the request
// brings. Immutable values (strings, numbers) are not copied.
func deliveryArgs(args []any) []any {
	var out []any
	for i, a := range args {
		if clone.Immutable(a) {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i], _, _ = clone.Copy(a, refs) // cannot fail: the stub copied it under this policy
	}
	if out == nil {
		return args
	}
	return out
}

// serveHTTP runs the object's fetch handler with the attempt's body.
func (h *host) serveHTTP(ctx context.Context, f *flight) {
	k := h.ns.r.k
	req := f.Req.HTTP.Clone(ctx)
	req.Body = f.Body
	if req.Body == nil {
		req.Body = http.NoBody
	}
	tl := h.beginFetch(ctx, f, req)
	h.starting(f)
	f.Rec.Executed = true
	rec := httptest.NewRecorder()
	w := &fetchWriter{ResponseRecorder: rec, req: req}
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = &invoke.Panic{Value: p, Stack: debug.Stack()}
			}
		}()
		h.handler.ServeHTTP(w, req)
		return nil
	}()
	h.endFetch(ctx, tl, rec)
	f.Rec.Extend(k.Now())
	if err == nil {
		err = w.check()
	}
	if tl != nil && w.ws != nil {
		tl.pending = nil // a 101: a replay alone cannot follow its socket
	}
	answered(tl, nil, err)
	if err != nil {
		h.respond(f, wire.FailRemote, nil, nil, err)
		return
	}
	resp := rec.Result()
	if w.ws != nil {
		resp.Body = w.body(h)
	}
	h.respond(f, wire.FailNone, nil, resp, nil)
}

// copyResult copies a method's result across the boundary (rule O5); an
// RPC target becomes a stub that never retries (rule S1), and belongs to
// the call's RPC session: claim, when not "", is the marked method that
// began it (sessionClaim). A result that cannot be copied (nested deeper
// than clone.MaxDepth) is an error the caller gets as the object's.
func (h *host) copyResult(v any, claim string) (any, error) {
	if t, ok := v.(object.Target); ok {
		if claim != "" {
			t = &sessionTarget{Target: t, first: claim}
		}
		s, _ := h.ns.r.newStub(h, t, false)
		return s, nil
	}
	cp, _, err := clone.Copy(v, refs)
	if err != nil {
		return nil, err
	}
	return cp, nil
}

// refs is the copy policy of arguments and results (rules O5, S11).
var refs = object.Hosting(seal.Key{}).CopyPolicy()

// The RPC-session rule (rule S12; the message and its check are in the
// real workerd 1.20261117.1 binary: `After calling a method marked with
// retryable(), a Durable Object RPC session can only call methods marked
// with retryable().`, beside `claim == IsRetryableHandler::NO ||
// isRetryableMethod(...) == IsRetryableHandler::YES`; the session's first
// call claims the request's retry token with its mark,
// RequestObserver::claimRetryTokenBeforeUserCode). A session is a call
// through a stub of the object and every call made through the RPC
// targets it returned, awaited or pipelined (Promise.Pipeline), and
// through the targets those returned. When the session's first method is
// marked object.Retryable, a retry may run the session again, so every
// later call in it must be marked too; an unmarked one is refused before
// it runs. A session begun by an unmarked method calls what it likes.

// sessionTarget is an RPC target returned in a session begun by a marked
// method (first): a call through it must be to a marked method.
type sessionTarget struct {
	object.Target
	first string
}

// sessionClaim returns the marked method that began f's session, or ""
// when the session's first method is unmarked: f's own method when it is
// the session's first call (a call through a stub of the object).
func sessionClaim(f *flight, m *compiled) string {
	if st, ok := f.RPC.(*sessionTarget); ok {
		return st.first
	}
	if f.RPC == nil && f.Req.HTTP == nil && m.retryable {
		return f.Req.Method
	}
	return ""
}

// ErrRetryableSession is wrapped by the error of a call refused by the
// RPC-session rule: in a session begun by a method marked
// object.Retryable, a call through a returned RPC target to a method that
// is not marked. Its message is the platform's.
var ErrRetryableSession error = sessionRule{}

type sessionRule struct{}

func (sessionRule) Error() string {
	return "After calling a method marked with retryable(), a Durable Object RPC session can only call methods marked with retryable()."
}

// sessionError is the refusal of method, unmarked, in a session that
// began with the marked method first. It wraps ErrRetryableSession
// and ErrSetup (the host's answer, before the object's code ran).
type sessionError struct{ method, first string }

func (e *sessionError) Error() string {
	return ErrRetryableSession.Error() + " (" + e.method + " is not marked object.Retryable; the session began with " + e.first + ", which is)"
}

func (e *sessionError) Is(target error) bool {
	return target == ErrRetryableSession || target == ErrSetup
}
