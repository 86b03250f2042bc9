// Package errchain reads the error an object's code returned as it leaves
// the object for its caller (rules S4, O5): its text, the flags of a stub
// error in its chain, and a copy of it made in the object's turn (Cross).
// The chain is the object's code's, so it is walked by hand (Walk): at most
// MaxChain errors, never through an Is method, and a panicking Unwrap ends
// the walk. Package runtime crosses an error in the object's turn; package
// stub turns the crossing into the caller's error.
package errchain

import "github.com/dosim/dosim/internal/clone"

// Crossed is an object's error as it crossed to its caller: its text, its
// flags, whether it wrapped clone.ErrNotCopyable, and a copy of it (nil
// when it is not plain data).
type Crossed struct {
	Msg                   string
	NotData               bool
	Retryable, Overloaded bool
	Reset                 bool // the object's error says it was reset (durableObjectReset)
	Copy                  error
}

// Error returns the object's error's text.
func (c *Crossed) Error() string { return c.Msg }

// Flags reads the flags of a stub error (Retryable, Overloaded,
// DurableObjectReset), ok false when e is not one.
type Flags func(e error) (retryable, overloaded, reset, ok bool)

// Cross reads err as it crosses: its text, the flags of the first error in
// its chain that flags knows (as errors.As finds it), and, when copied, a
// copy of err when it is plain data. nil crosses as the text "<nil>".
func Cross(err error, copied bool, flags Flags) *Crossed {
	c := &Crossed{Msg: "<nil>"}
	if err == nil {
		return c
	}
	c.Msg = Text(err)
	flagged := false
	Walk(err, func(e error) bool {
		if e == clone.ErrNotCopyable {
			c.NotData = true
		}
		if !flagged {
			c.Retryable, c.Overloaded, c.Reset, flagged = flags(e)
		}
		return false
	})
	if copied {
		if cp, _, cerr := clone.Copy(err, nil); cerr == nil {
			c.Copy, _ = cp.(error)
		}
	}
	return c
}

// Text is err's text; an Error method that panics gives what runtime's
// readObjectErr would have made of it.
func Text(err error) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			msg = "an error whose Error method panicked"
		}
	}()
	return err.Error()
}

// MaxChain is how many errors of an object's chain Walk visits at most.
const MaxChain = 64

// Walk calls visit on err and the errors it wraps, depth first, until
// visit returns true. The chain is the object's code's, so it is walked by
// hand: at most MaxChain errors, never through an Is method, and a
// panicking Unwrap (or visit) ends the walk (errors.Is would loop for good
// on an error that unwraps to itself).
func Walk(err error, visit func(error) bool) { WalkAtMost(err, MaxChain, visit) }

// WalkAtMost is Walk visiting at most n errors; it reports whether visit
// returned true.
func WalkAtMost(err error, n int, visit func(error) bool) (found bool) {
	defer func() { _ = recover() }()
	todo := []error{err}
	for i := 0; len(todo) > 0 && i < n; i++ {
		e := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if e == nil {
			continue
		}
		if visit(e) {
			return true
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
	return false
}
