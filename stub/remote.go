package stub

import (
	"reflect"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/errchain"
)

// remoteError is an object's error after it crossed the boundary (rules
// S4, O5): its text, the flags of a *Error in its chain, whether it
// wrapped clone.ErrNotCopyable, and a copy of it (nil when it is not plain
// data), which As finds. Package runtime crosses an error in the object's
// turn (errchain.Cross with Flags), so that the copy is of the error as
// the method returned it.
type remoteError struct{ c errchain.Crossed }

func (r *remoteError) Error() string { return r.c.Msg }

// Is matches ErrRemote, and clone.ErrNotCopyable (object.ErrNotPlainData)
// when the object's error wrapped it. It does not look into the copy: an
// object's sentinel, copied, is another value (see Error).
func (r *remoteError) Is(target error) bool {
	return target == ErrRemote || r.c.NotData && target == clone.ErrNotCopyable
}

// As sets target to the first error in the copy's chain that it can hold,
// as errors.As would, so that errors.As(err, &myErr) works at the caller.
// The chain is the object's code's, so it is walked as errchain.Walk walks
// it: a panicking Unwrap or As method ends the walk, and it stops after
// errchain.MaxChain errors.
func (r *remoteError) As(target any) bool {
	if r.c.Copy == nil {
		return false
	}
	tv := reflect.ValueOf(target)
	if tv.Kind() != reflect.Pointer || tv.IsNil() {
		return false
	}
	want := tv.Type().Elem()
	found := false
	errchain.Walk(r.c.Copy, func(e error) bool {
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
	if r.c.Copy == nil {
		return r // nothing in it can be changed
	}
	c := *r
	if cp, _, err := clone.Copy(r.c.Copy, nil); err == nil {
		c.c.Copy, _ = cp.(error)
	}
	return &c
}

// flagsOf reads the flags of a *Error for errchain.Cross: the flags an
// object's error crosses with when its chain holds the error of a call
// the object made (see Error). Package runtime reads them as well.
func flagsOf(e error) (retryable, overloaded, reset, ok bool) {
	se, ok := e.(*Error)
	return ok && se.Retryable, ok && se.Overloaded, ok && se.DurableObjectReset, ok
}

// crossed returns the remoteError of err, an object's error: as package
// runtime crossed it in the object's turn, or, when it did not (a fetch
// handler's panic, a result that cannot be copied), its text and flags.
func crossed(err error) *remoteError {
	if c, ok := err.(*errchain.Crossed); ok {
		return &remoteError{c: *c}
	}
	return &remoteError{c: *errchain.Cross(err, false, flagsOf)}
}

var _ interface {
	error
	Is(error) bool
	As(any) bool
} = (*remoteError)(nil)
