package runtime

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dosim/dosim/internal/errchain"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
)

// brokenError stands for an error that object code returned (a method, a
// task's callback, an alarm handler) whose Error method panicked: the
// object's fault, reported as its error naming the code that returned it
// (to a caller, a Remote error, rule S4), never a panic of the task that
// later reads the text (the caller's: task "root" panicked).
type brokenError struct{ msg string }

// Error names the code that returned the error and what its Error method
// panicked with.
func (e *brokenError) Error() string { return e.msg }

// readObjectErr reads the text of err, which the code named by what (such
// as "INVENTORY/apple.Get") returned, in the object's own turn: err itself
// when its Error method works, a brokenError naming what when it panics.
// nil stays nil.
func readObjectErr(what string, err error) (out error) {
	if err == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			out = &brokenError{msg: fmt.Sprintf("%s returned an error (%T) whose Error method panicked: %v", what, err, p)}
		}
	}()
	_ = err.Error()
	return err
}

// crossingErr is the error a method returned as it leaves the object for
// its caller (rules S4, O5): its text read in the object's own turn
// (readObjectErr), its flags, and a copy of it made now, before the
// object's code can change it (errchain.Cross). nil stays nil.
func crossingErr(what string, err error) error {
	err = readObjectErr(what, err)
	if err == nil {
		return nil
	}
	return errchain.Cross(err, true, stubFlags)
}

// stubFlags reads the flags of a *stub.Error in an object's error's chain
// (the error of a call the object made), which its error crosses with.
func stubFlags(e error) (retryable, overloaded, reset, ok bool) {
	if se, is := e.(*stub.Error); is {
		return se.Retryable, se.Overloaded, se.DurableObjectReset, true
	}
	return false, false, false, false
}

// noMethodError is the error for a method the object does not have. Called
// through a stub (rpc), it is the platform's TypeError, `The RPC receiver
// does not implement the method "nope".` (real workerd 1.20261117.1), then
// the methods the class has: the object's answer, so the caller's
// *stub.Error is Remote and the stub is not broken (rules S4, L2). Named by
// a schedule or a queue, it says which class lacks it. It wraps
// object.ErrNoMethod, and ErrSetup when called through a stub.
type noMethodError struct {
	class, method string
	has           []string
	rpc           bool
}

func (e *noMethodError) Error() string {
	if !e.rpc {
		return fmt.Sprintf("%v: %s has no method %q (it has %s)", object.ErrNoMethod, e.class, e.method, e.list(fmt.Sprint(e.has)))
	}
	return "The RPC receiver does not implement the method " + strconv.Quote(e.method) + ". (" + e.class + " has " +
		e.list("methods "+strings.Join(e.has, ", ")) + ")"
}

// list is has, or "no methods" when the class has none.
func (e *noMethodError) list(has string) string {
	if len(e.has) == 0 {
		return "no methods"
	}
	return has
}

func (e *noMethodError) Is(target error) bool {
	return target == object.ErrNoMethod || target == ErrSetup && e.rpc
}
