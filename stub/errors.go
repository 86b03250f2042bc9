package stub

import (
	"errors"
	"strconv"

	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/transport"
)

// Error is the error a call returns when an attempt failed. Branch on its
// flags with errors.As:
//
//	var e *stub.Error
//	if errors.As(err, &e) && e.Remote { ... }
//
// An error the object's code returned (Remote) crosses as on the
// platform, where a thrown error arrives with its own properties (real
// workerd 1.20261117.1): when its chain holds a *Error (the object passed
// on the error of a call it made), the caller's keeps that one's
// Retryable, Overloaded and DurableObjectReset flags (a thrown error with
// durableObjectReset: true crosses with it on the platform), and is
// Remote as well, so that it is never retried (rule S4) and leaves the
// stub usable (rule L2). The error itself crosses as a
// copy, made in the object's turn as results are (plain data, rule O5):
// errors.As(err, &myErr) finds the copy, which shares no memory with the
// object's error. errors.Is does not look into it: the copy of a sentinel
// is another value, so the object's sentinels do not match across the
// boundary (as on the platform, no identity crosses); branch on a type
// with errors.As. An error that is not plain data (it holds a func, a
// channel, a stub, a reader) or that does not copy (a cycle) crosses as
// its text only; its flags cross all the same.
// Msg is "object error: " and the error's text, in every case.
type Error struct {
	// Retryable: the failure is one the runtime may retry (the request
	// never reached the object, or the link broke so arrival is unknown).
	Retryable bool
	// Overloaded: the object refused the request as overloaded; never retried.
	Overloaded bool
	// Remote: the object's own code returned this error or panicked, or the
	// object has no such method (as on the platform: its TypeError is remote).
	Remote bool
	// DurableObjectReset: the object was reset (a deploy, a storage fault,
	// a memory overrun, rule L3) while the request ran, or while it waited
	// at the object's gate (then with the running request's error, not
	// Retryable either, as on the platform: it is not retried and its
	// method never runs). Msg carries the platform's message, or, for a
	// reset the object's code made, its own words: the reason given to
	// State.Abort, the error of BlockConcurrencyWhile's failed function.
	DurableObjectReset bool
	// Broken: the call was refused because its stub was broken by an
	// earlier call's failure (rule L2), and was never sent. Msg names the
	// call that broke the stub and its error, which Unwrap returns; the
	// other flags are that error's. Take a new stub from the namespace
	// (Get, GetByName) for the next call.
	Broken bool

	// Fault is the link fault behind the failure (transport.None if none).
	Fault transport.Fault
	// Attempt is the attempt that failed, from 1.
	Attempt   int
	Namespace string
	Object    string
	Method    string
	// Msg says what happened, for a person.
	Msg   string
	cause error
	kind  wire.FailKind // how the attempt failed: a Remote or setup error does not break a stub (L2)
}

// A call made outside a simulated task (from a goroutine a method started,
// say, or with a nil context) fails with runtime.ErrNotInTask, the one
// error for that condition whichever package notices it (stubs, sleeps,
// Group.Go).

// ErrRemote is the cause of errors returned or panicked by object code.
// Such an error crosses the boundary as on the platform, where a thrown
// error arrives with its own properties and remote = true: its text, the
// Retryable and Overloaded flags of a *Error in its chain, whether it
// wraps object.ErrNotPlainData (a result, or a value the method stored,
// that is not plain data: rule O5), and a copy of the error itself, made
// as results are (plain data, rule O5), which errors.As finds (see
// Error).
var ErrRemote = errors.New("object error")

// ErrDuplicate is the cause recorded when the host rejects a request
// identity it has already received (rule S6).
var ErrDuplicate = errors.New("duplicate request rejected")

// ErrPipelined is wrapped by the error of a call made on a promise whose
// call failed (rule S12).
var ErrPipelined = errors.New("pipelined on a failed call")

// Error says which object, method and attempt failed, how, and the
// error's flags.
func (e *Error) Error() string {
	// Built by hand, not by fmt: every call record of a failed call writes
	// its error's text, an explored seed a few of them.
	b := make([]byte, 0, len(e.Namespace)+len(e.Object)+len(e.Method)+len(e.Msg)+48)
	b = append(b, e.Namespace...)
	b = append(b, '/')
	b = append(b, e.Object...)
	b = append(b, ' ')
	b = append(b, e.Method...)
	if !e.Broken { // a call refused by a broken stub made no attempt
		b = append(b, ", attempt "...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
	}
	b = append(b, ": "...)
	b = append(b, e.Msg...)
	sep := " ["
	for _, f := range [...]struct {
		on   bool
		name string
	}{{e.Retryable, "retryable"}, {e.Overloaded, "overloaded"}, {e.Remote, "remote"}, {e.Broken, "broken"}} {
		if f.on {
			b = append(b, sep...)
			b = append(b, f.name...)
			sep = ", "
		}
	}
	if sep == ", " {
		b = append(b, ']')
	}
	return string(b)
}

// Unwrap returns the cause: the object's error text (wrapping ErrRemote),
// ErrDuplicate, a setup error (unknown method, bad arguments), or nil for a
// link fault.
func (e *Error) Unwrap() error { return e.cause }

// brokenError is the error of a call of method refused because its stub
// was broken by cause, the error of an earlier call (rule L2): flagged
// Broken, with cause's flags, naming the call that broke the stub and
// saying to take a new one. Unwrap returns cause.
func brokenError(method string, cause error) *Error {
	e := &Error{Broken: true, Method: method, cause: cause, kind: wire.FailBroken}
	by := "an earlier call failed: " + cause.Error()
	if c, ok := cause.(*Error); ok {
		e.Retryable, e.Overloaded, e.Remote, e.DurableObjectReset = c.Retryable, c.Overloaded, c.Remote, c.DurableObjectReset
		e.Fault, e.Namespace, e.Object = c.Fault, c.Namespace, c.Object
		by = "the call of " + c.Method + " failed at attempt " + strconv.Itoa(c.Attempt) + ": " + c.Msg
	}
	e.Msg = "broken stub, not sent: " + by + "; take a new stub from the namespace (Get, GetByName) for the next call (rule L2)"
	return e
}

// newError turns the failed attempt of fr's call whose reply is rep into
// the caller's error.
func newError(fr *frame, rep *wire.Reply) *Error {
	f := rep
	e := &Error{
		Fault:     f.Fault,
		Attempt:   fr.n,
		Namespace: fr.s.target.Namespace,
		Object:    fr.s.target.Object,
		Method:    fr.req.Method,
		kind:      f.Kind,
	}
	switch f.Kind {
	case wire.FailLink: // what the fault means is the link's (package transport)
		e.Msg = f.Fault.Message()
		e.Retryable = f.Fault.Retryable()
		e.Overloaded = f.Fault == transport.Overloaded
	case wire.FailReset: // after delivery: never retried (S4)
		e.DurableObjectReset = true
		e.Overloaded = f.Reset == transport.ResetBlockTimeout // as the platform flags its timeout
		e.Msg = f.Fault.Message()
		switch {
		case f.Err != nil: // the object's own words: State.Abort's reason, a failed BlockConcurrencyWhile's error
			e.Msg = f.Err.Error()
		case f.Reset != transport.NoReset:
			e.Msg = "object reset (" + f.Reset.String() + "): " + f.Reset.Message()
		}
	case wire.FailRemote: // never retried, whatever its flags (S4, decide)
		r := crossed(f.Err)
		e.Remote = true
		e.Retryable, e.Overloaded, e.DurableObjectReset = r.c.Retryable, r.c.Overloaded, r.c.Reset
		e.Msg = "object error: " + r.c.Msg
		e.cause = r
	case wire.FailRejected:
		e.Msg = "duplicate request rejected: the object already received this request identity and the method is not marked Retryable"
		e.cause = ErrDuplicate
	case wire.FailSetup, wire.FailClosed:
		e.Msg = f.Err.Error()
		e.cause = f.Err
		// A method the object does not have: the object's answer, as on
		// the platform (a TypeError with remote = true).
		e.Remote = f.Kind == wire.FailSetup && fr.req.HTTP == nil && errors.Is(f.Err, object.ErrNoMethod)
	}
	return e
}
