package stub

import (
	"reflect"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/seal"
)

// remoteError is an object's error after it crossed the boundary (rules
// S4, O5): its text, the flags of a *Error in its chain, whether it
// wrapped clone.ErrNotCopyable, and a copy of it (nil when it is not plain
// data), which As finds.
type remoteError struct {
	msg                   string
	notData               bool
	retryable, overloaded bool
	reset                 bool // the object's error says it was reset (durableObjectReset)
	copied                error
}

func (r *remoteError) Error() string { return r.msg }

// Is matches ErrRemote, and clone.ErrNotCopyable (object.ErrNotPlainData)
// when the object's error wrapped it. It does not look into the copy: an
// object's sentinel, copied, is another value (see Error).
func (r *remoteError) Is(target error) bool {
	return target == ErrRemote || r.notData && target == clone.ErrNotCopyable
}

// As sets target to the first error in the copy's chain that it can hold,
// as errors.As would, so that errors.As(err, &myErr) works at the caller.
// The chain is the object's code's, so it is walked as walk walks it: a
// panicking Unwrap or As method ends the walk, and it stops after
// maxChain errors.
func (r *remoteError) As(target any) bool {
	if r.copied == nil {
		return false
	}
	tv := reflect.ValueOf(target)
	if tv.Kind() != reflect.Pointer || tv.IsNil() {
		return false
	}
	want := tv.Type().Elem()
	found := false
	walk(r.copied, func(e error) bool {
		if reflect.TypeOf(e).AssignableTo(want) {
			tv.Elem().Set(reflect.ValueOf(e))
			found = true
		} else if x, ok := e.(interface{ As(any) bool }); ok && x.As(target) {
			found = true
		}
		return found
	})
	return found
}

// own returns r with a copy of its own of the object's error, for one
// more holder (the caller, beside the record: snapshot).
func (r *remoteError) own() *remoteError {
	if r.copied == nil {
		return r // nothing in it can be changed
	}
	c := *r
	if cp, _, err := clone.Copy(r.copied, nil); err == nil {
		c.copied, _ = cp.(error)
	}
	return &c
}

// CrossingForRuntime returns err, an error a method returned (its text
// already read safely, in the object's turn), as it crosses to the
// caller: a *remoteError with its text, flags and copy (see Error). For
// package runtime, which calls it in the object's turn, so that the copy
// is of the error as the method returned it.
func CrossingForRuntime(_ seal.Key, err error) error {
	if err == nil {
		return nil
	}
	return crossing(err, true)
}

// crossing builds the remoteError of err; copied: with a copy of err
// when it is plain data.
func crossing(err error, copied bool) (r *remoteError) {
	r = &remoteError{msg: "<nil>"}
	if err == nil {
		return r
	}
	r.msg = errText(err)
	flagged := false
	walk(err, func(e error) bool {
		if e == clone.ErrNotCopyable {
			r.notData = true
		}
		if se, ok := e.(*Error); ok && !flagged { // the first *Error in the chain, as errors.As finds it
			r.retryable, r.overloaded, r.reset, flagged = se.Retryable, se.Overloaded, se.DurableObjectReset, true
		}
		return false
	})
	if copied {
		if cp, _, cerr := clone.Copy(err, nil); cerr == nil {
			r.copied, _ = cp.(error)
		}
	}
	return r
}

// errText is err's text; an Error method that panics gives what
// runtime's readObjectErr would have made of it.
func errText(err error) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			msg = "an error whose Error method panicked"
		}
	}()
	return err.Error()
}

// maxChain is how many errors of an object's chain walk visits at most.
const maxChain = 64

// walk calls visit on err and the errors it wraps, depth first, until
// visit returns true. The chain is the object's code's, so it is walked by
// hand: at most maxChain errors, never through an Is method, and a
// panicking Unwrap (or visit) ends the walk (errors.Is would loop for good
// on an error that unwraps to itself).
func walk(err error, visit func(error) bool) {
	defer func() { _ = recover() }()
	todo := []error{err}
	for n := 0; len(todo) > 0 && n < maxChain; n++ {
		e := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if e == nil {
			continue
		}
		if visit(e) {
			return
		}
		switch x := e.(type) {
		case interface{ Unwrap() []error }:
			errs := x.Unwrap()
			for i := len(errs) - 1; i >= 0; i-- { // the first wrapped error first, as errors.As
				todo = append(todo, errs[i])
			}
		case interface{ Unwrap() error }:
			todo = append(todo, x.Unwrap())
		}
	}
}

var _ interface {
	error
	Is(error) bool
	As(any) bool
} = (*remoteError)(nil)
