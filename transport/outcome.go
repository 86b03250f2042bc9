package transport

import (
	"errors"
	"fmt"
	"strings"
)

// Outcome is how a call over the link ended (rule D2 of the design), as
// the stub decided it from its attempts. The zero value, OutcomePending,
// is a call that has not ended; it reads "". Outcomes marshal as text, so
// JSON and YAML spell them as String does ("attempts-exhausted").
type Outcome uint8

// The outcomes of a call.
const (
	OutcomePending           Outcome = iota // the call has not ended ("")
	OutcomeOK                               // the first attempt succeeded
	OutcomeRecovered                        // a retry succeeded
	OutcomeDuplicateRejected                // a retry was refused as a duplicate
	OutcomeAttemptsExhausted                // every allowed attempt failed
	OutcomeTimeout                          // the deadline stopped the retries
	OutcomeNotRetryable                     // an attempt failed in a way never retried
	OutcomeNotReplayable                    // the request could not be sent again
	OutcomeCancelled                        // the caller's context was cancelled
	OutcomeBrokenStub                       // the stub was broken by an earlier failure (rule L2)

	numOutcomes
)

var outcomeNames = [numOutcomes]string{
	OutcomePending:           "",
	OutcomeOK:                "ok",
	OutcomeRecovered:         "recovered",
	OutcomeDuplicateRejected: "duplicate-rejected",
	OutcomeAttemptsExhausted: "attempts-exhausted",
	OutcomeTimeout:           "timeout",
	OutcomeNotRetryable:      "not-retryable",
	OutcomeNotReplayable:     "not-replayable",
	OutcomeCancelled:         "cancelled",
	OutcomeBrokenStub:        "broken-stub",
}

// Outcomes lists every outcome of an ended call, in declaration order
// (OutcomePending is not one).
func Outcomes() []Outcome {
	out := make([]Outcome, 0, numOutcomes-1)
	for o := OutcomeOK; o < numOutcomes; o++ {
		out = append(out, o)
	}
	return out
}

// String returns the outcome's name ("not-retryable"), "" for OutcomePending.
func (o Outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// ErrUnknownOutcome is wrapped by ParseOutcome's error.
var ErrUnknownOutcome = errors.New("unknown outcome")

// ParseOutcome reads the name of an ended call's outcome as String writes it.
func ParseOutcome(s string) (Outcome, error) {
	for o := OutcomeOK; o < numOutcomes; o++ {
		if s == outcomeNames[o] {
			return o, nil
		}
	}
	return OutcomePending, fmt.Errorf("%w %q: allowed are %s", ErrUnknownOutcome, s, strings.Join(outcomeNames[1:], ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) {
	if o >= numOutcomes {
		return nil, fmt.Errorf("%w: %d", ErrUnknownOutcome, uint8(o))
	}
	return []byte(outcomeNames[o]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; "" reads as
// OutcomePending.
func (o *Outcome) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*o = OutcomePending
		return nil
	}
	v, err := ParseOutcome(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}
