package runtime

import "fmt"

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
