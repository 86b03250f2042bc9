package stub

import (
	"math/rand/v2"
	"time"

	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/transport"
)

// ended is what the stub knows when it stops waiting for attempt n: the
// input of decide.
type ended struct {
	n int // the attempt, from 1
	// stopped: the caller stopped waiting before the attempt's fate was
	// known (a retry at the deadline, or the caller's context, S9, S14).
	stopped bool
	// kind is how the attempt failed; FailNone: it succeeded.
	kind wire.FailKind
	// retryable: the attempt's error is marked retryable (S3, S4). An
	// object's own error (FailRemote) may be, when it passes on a *Error
	// that was: it is never retried all the same.
	retryable bool
	// replayable: the request can be sent again (S11).
	replayable bool
	// pipelined: a call was pipelined on this call's result (S12).
	pipelined bool
	// maxRetries is the stub's retry limit (S2).
	maxRetries int
	// cancelled: the caller's context is done (S14).
	cancelled bool
	// now and deadline are virtual times; deadline is the call's start plus
	// its timeout (S9).
	now, deadline time.Duration
}

// blame says which error a call that ends returns.
type blame uint8

const (
	blameNone      blame = iota // no error: the call succeeded
	blameFirst                  // the first attempt's error (S10)
	blameLast                   // this attempt's error: it is never retried (S4, S10)
	blameCancelled              // an error wrapping the caller's context error (S14)
)

// verdict is what the stub does next: retry after sleep, or end the call
// with outcome and the error blame names.
type verdict struct {
	retry   bool
	sleep   time.Duration // the backoff before the retry (S8)
	outcome transport.Outcome
	blame   blame
}

// decide is the stub's retry decision after an attempt (rules S3, S4, S6,
// S9-S12, S14): retry or not, with which outcome, and which error the
// caller gets. It draws the backoff from rng (S8) only when every other
// rule lets the retry go, so the seeded sequence moves only then.
func decide(e ended, rng *rand.Rand) verdict {
	switch {
	case e.stopped && e.cancelled: // S14
		return verdict{outcome: transport.OutcomeCancelled, blame: blameCancelled}
	case e.stopped: // S9: a retry still waiting at the deadline
		return verdict{outcome: transport.OutcomeTimeout, blame: blameFirst}
	case e.kind == wire.FailNone && e.n == 1:
		return verdict{outcome: transport.OutcomeOK}
	case e.kind == wire.FailNone:
		return verdict{outcome: transport.OutcomeRecovered}
	case e.kind == wire.FailRejected: // S6: the call fails with its first error
		return verdict{outcome: transport.OutcomeDuplicateRejected, blame: blameFirst}
	case !e.retryable || e.kind == wire.FailRemote: // S4, S10: a later non-retryable error wins; the object's own error, whatever its flags
		return verdict{outcome: transport.OutcomeNotRetryable, blame: blameLast}
	case !e.replayable || e.pipelined: // S11, S12
		return verdict{outcome: transport.OutcomeNotReplayable, blame: blameFirst}
	case e.n > e.maxRetries: // S2
		return verdict{outcome: transport.OutcomeAttemptsExhausted, blame: blameFirst}
	case e.cancelled: // S14: no attempt starts after cancellation
		return verdict{outcome: transport.OutcomeCancelled, blame: blameCancelled}
	}
	sleep := retryBackoff(rng, e.n) // S8
	// S9: no retry whose backoff ends at or after the deadline (written
	// so that it cannot overflow near the end of virtual time).
	if sleep >= e.deadline-e.now {
		return verdict{outcome: transport.OutcomeTimeout, blame: blameFirst}
	}
	return verdict{retry: true, sleep: sleep}
}

// notReached reports whether an attempt that failed so (kind, fault) is
// known not to have reached the object: the link told the caller that it
// was not delivered (a fault that strikes before the object and is not
// ambiguous). Its retry takes a new request identity (rule S5). (A request
// queued at the object's gate when it resets reached the object: it fails
// with the reset, not retried, rule L3.)
func notReached(kind wire.FailKind, fault transport.Fault) bool {
	return kind == wire.FailLink && !fault.Reaches() && !fault.Ambiguous()
}
