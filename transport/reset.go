package transport

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ResetReason is why an object instance was reset (rule L3): its
// in-memory fields are lost, its storage, alarm and tasks survive, and
// the next delivery constructs a new instance. The zero value, NoReset,
// is no reason (a reset by FailAfterDelivery, which has its own words).
type ResetReason uint8

// The reasons of a reset, with the platform's messages.
const (
	NoReset          ResetReason = iota // no reason given ("")
	ResetCodeUpdate                     // the object's code was updated (a deploy)
	ResetStorage                        // an internal error in the object's storage
	ResetMemoryLimit                    // the isolate exceeded its memory limit
	// ResetBlockFailed: the function given to BlockConcurrencyWhile failed
	// (rule L6). It follows from object code, so no fault or
	// Namespace.Reset names it, and ResetReasons leaves it out. The
	// caller's message is the function's own error's, as on the platform;
	// this reason's message, dosim's words, stands in only when that
	// error has no text.
	ResetBlockFailed
	// ResetAbort: the object's code called State.Abort (the platform's
	// ctx.abort, rule L3). Like ResetBlockFailed it follows from object
	// code and ResetReasons leaves it out; its message is the platform's
	// for an abort without a reason.
	ResetAbort
	// ResetBlockTimeout: the function given to BlockConcurrencyWhile ran
	// 30 s of virtual time without returning (rule L6): the platform
	// cancels it and resets the object; its caller's error is flagged
	// overloaded as well as reset. Like ResetBlockFailed it follows from
	// object code and ResetReasons leaves it out.
	ResetBlockTimeout

	numResetReasons
)

var resetReasons = [numResetReasons]struct{ name, message string }{
	NoReset:          {"", ""},
	ResetCodeUpdate:  {"code-update", "Durable Object reset because its code was updated."},
	ResetStorage:     {"storage", "Internal error in Durable Object storage caused object to be reset"},
	ResetMemoryLimit: {"memory-limit", "Durable Object's isolate exceeded its memory limit and was reset."},
	ResetBlockFailed: {"block-concurrency-failed", "Durable Object reset because the function given to blockConcurrencyWhile() failed."},
	ResetAbort:       {"abort", "Application called abort() to reset Durable Object."},
	ResetBlockTimeout: {"block-concurrency-timeout",
		"A call to blockConcurrencyWhile() in a Durable Object waited for too long. The call was canceled and the Durable Object was reset."},
}

// ResetReasons lists every reason but NoReset, in declaration order.
func ResetReasons() []ResetReason {
	return []ResetReason{ResetCodeUpdate, ResetStorage, ResetMemoryLimit}
}

// String returns the reason's name as scenarios spell it ("code-update").
func (r ResetReason) String() string {
	if r < numResetReasons {
		return resetReasons[r].name
	}
	return fmt.Sprintf("reset-reason(%d)", uint8(r))
}

// Message is the platform's message for the reason, verbatim ("Durable
// Object reset because its code was updated.").
func (r ResetReason) Message() string {
	if r < numResetReasons {
		return resetReasons[r].message
	}
	return ""
}

// ErrUnknownResetReason is wrapped by ParseResetReason's error.
var ErrUnknownResetReason = errors.New("unknown reset reason")

// ParseResetReason reads a reason's name as String writes it.
func ParseResetReason(s string) (ResetReason, error) {
	names := make([]string, 0, numResetReasons-1)
	for _, r := range ResetReasons() {
		if s == r.String() {
			return r, nil
		}
		names = append(names, r.String())
	}
	return NoReset, fmt.Errorf("%w %q: allowed are %s", ErrUnknownResetReason, s, strings.Join(names, ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (r ResetReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; "" reads as NoReset.
func (r *ResetReason) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*r = NoReset
		return nil
	}
	v, err := ParseResetReason(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Decision is what the link does to one attempt: its fault, its latency,
// and for the Reset fault the reason of the reset.
type Decision struct {
	Fault  Fault
	Delay  time.Duration
	Reason ResetReason
}
