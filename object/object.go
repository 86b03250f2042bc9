// Package object is what dosim users write: Durable-Object-style classes.
//
// An object is any type with a Methods method listing what callers may
// invoke by name. Each entry is a Go function of the form
//
//	func(ctx context.Context, args...) (R, error)
//	func(ctx context.Context, args...) error
//
// wrapped in Func, or in Retryable when running it twice for one request is
// safe (rule S6: only marked methods run again when a retry reaches the
// object a second time). An object that also implements http.Handler serves
// Stub.Fetch. The runtime gives each instance a *State with its id, its
// durable Storage, and a virtual-time Sleep.
//
// Arguments, results, stored values, effects' payloads and tasks' payloads
// are copied (rules O4, O5) and must be plain data: bools, numbers,
// strings, time.Time, and slices, arrays, maps, structs, pointers and
// interfaces made of these, with no cycle. Anything else is refused with
// its path (see ErrNotPlainData), except what a call passes by reference:
// a stub, an RpcTarget, an io.Reader, which make the call one-shot.
//
// Inside a method, use only simulation blocking points: st.Sleep, calls on
// stubs, and storage. Never time.Sleep, raw channels or goroutines: they
// would step outside the deterministic scheduler.
//
// Beyond requests, an object has an alarm (State.SetAlarm, or Storage's,
// and the Alarmer interface, rule O6). The Agents SDK's helpers (rules
// A1-A7) are package agent's: agent.Retry for jittered retries inside a
// turn, and agent.Agent, which a class embeds, for Schedule and Queue
// (tasks kept in storage that run the object's own methods later), OnError
// for their failures, and opt-in dead letters, circuit breakers and an
// independent queue mode.
package object

import (
	"fmt"
	"reflect"
)

// Object is a Durable-Object-style class instance.
type Object interface {
	// Methods lists the methods callers may invoke by name. The runtime
	// calls it once per instance, when the instance is built.
	Methods() Methods
}

// Methods maps method names to their implementations.
type Methods map[string]Method

// Method is one entry of Methods: a function and whether it is marked
// retryable. The mark belongs to the entry (rule S7): reuse an embedded
// type's entry and the mark comes with it; replace it with an override, a
// bound closure or a wrapper and it is unmarked until passed to Retryable.
type Method struct {
	fn        any
	retryable bool
}

// Func wraps fn as an unmarked method: it never runs twice because of a retry.
func Func(fn any) Method { return Method{fn: fn} }

// Retryable wraps fn as a method that is safe to run again when a retry of
// the same request reaches the object a second time (it is idempotent).
func Retryable(fn any) Method { return Method{fn: fn, retryable: true} }

// Fn returns the wrapped function.
func (m Method) Fn() any { return m.fn }

// IsRetryable reports whether the method is marked with Retryable.
func (m Method) IsRetryable() bool { return m.retryable }

// String describes the method's signature and mark.
func (m Method) String() string {
	mark := ""
	if m.retryable {
		mark = " (retryable)"
	}
	if m.fn == nil {
		return "<nil>" + mark
	}
	return reflect.TypeOf(m.fn).String() + mark
}

// RpcTarget is embedded by types whose values travel by reference: a method
// that returns one gives its caller a stub whose calls run the target's
// Methods inside the object that returned it. Such stubs never retry (rule
// S1), and a call whose arguments hold an RpcTarget is sent once (S11).
//
//	type Session struct {
//		object.RpcTarget
//		user string
//	}
//	func (s *Session) Methods() object.Methods { ... }
type RpcTarget struct{}

//lint:ignore U1000 the marker that makes a type an RPC target
func (RpcTarget) isRPCTarget() {}

// Target is implemented by every type that embeds RpcTarget and has Methods.
type Target interface {
	Methods() Methods
	isRPCTarget()
}

// IsTarget reports whether v is an RPC target (embeds RpcTarget and has Methods).
func IsTarget(v any) bool {
	_, ok := v.(Target)
	return ok
}

// ErrNoMethod is wrapped by the error for an unknown method name.
var ErrNoMethod = fmt.Errorf("no such method")
