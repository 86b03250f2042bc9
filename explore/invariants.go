package explore

import (
	"fmt"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
)

// Kinds of violation.
const (
	KindInvariant       = "invariant"       // an S rule was broken
	KindExpectation     = "expectation"     // an explore.expect expectation was not met
	KindLinearizability = "linearizability" // an object's history has no sequential explanation
	KindError           = "error"           // the simulation itself failed (deadlock, panic)
	KindFunc            = "func"            // an explored function returned an error (RunFunc)
	// KindNondeterminism: the same seed ran twice and the runs differed
	// (Options.CheckDeterminism).
	KindNondeterminism = "nondeterminism"
)

// Violation is one thing a seed broke.
type Violation struct {
	Seed    uint64 `json:"seed"`
	Kind    string `json:"kind"`
	Rule    string `json:"rule,omitempty"` // the S rule, for an invariant
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
	// Unexplained, for a linearizability violation, is the first
	// operation no order of those before it explains (rule C10).
	Unexplained *Unexplained `json:"unexplained,omitempty"`
}

// String writes the violation on one line: seed, kind, rule, object, message.
func (v Violation) String() string {
	s := fmt.Sprintf("seed %d: %s", v.Seed, v.Kind)
	if v.Rule != "" {
		s += " " + v.Rule
	}
	if v.Object != "" {
		s += " " + v.Object
	}
	return s + ": " + v.Message
}

// invariants checks the S rules, and L2 (no call reached the object
// through a broken stub), on every call record of a run.
func (e *Explorer) invariants(seed uint64, res *scenario.Result) []Violation {
	var out []Violation
	for _, o := range res.Outcomes {
		if o.Call == nil {
			continue
		}
		st := o.Call.Stub
		timeout := time.Duration(st.TimeoutMs) * time.Millisecond
		marked := e.marks[st.Namespace.Name][o.Call.Method]
		for _, idx := range o.Records {
			out = append(out, recordInvariants(seed, res.Calls[idx], marked, st.MaxRetries, timeout)...)
		}
	}
	return out
}

// recordInvariants checks the S rules on one call record: the call's
// method is marked or not, and its stub allowed maxRetries retries until
// timeout.
func recordInvariants(seed uint64, c runtime.CallRecord, marked bool, maxRetries int, timeout time.Duration) []Violation {
	var out []Violation
	bad := func(rule string, format string, args ...any) {
		out = append(out, Violation{Seed: seed, Kind: KindInvariant, Rule: rule,
			Object:  c.Namespace + "/" + c.Object,
			Message: fmt.Sprintf("%s (request %s): ", c.Method, c.RequestID) + fmt.Sprintf(format, args...)})
	}
	if !marked && c.Executions() > 1 {
		bad("S6", "an unmarked method ran %d times for one call", c.Executions())
	}
	if len(c.Attempts) > maxRetries+1 {
		bad("S2", "%d attempts, more than MaxRetries+1 = %d", len(c.Attempts), maxRetries+1)
	}
	if c.Subrequests != 1 {
		bad("S13", "%d subrequests, want 1", c.Subrequests)
	}
	if c.Outcome == transport.OutcomeBrokenStub {
		for _, a := range c.Attempts {
			if a.Delivered {
				bad("L2", "attempt %d reached the object through a broken stub", a.N)
			}
		}
	}
	deadline := c.Start + min(timeout, runtime.MaxElapsed+1-c.Start) // saturated at the end of virtual time, as the stub's
	for _, a := range c.Attempts {
		if a.N > 1 && a.Start >= deadline {
			bad("S9", "attempt %d started at %v, at or after the deadline %v", a.N, a.Start, deadline)
		}
		if a.N == 1 && a.Cancelled {
			bad("S9", "the first attempt was cancelled")
		}
	}
	identityInvariants(c, bad)
	if lost := lostSuccess(c); lost > 0 {
		bad("L7", "the caller saw success (%s) for %s that %s lost: a failed write made %s vanish after the reply went (a write with AllowUnconfirmed?)",
			c.Outcome, plural(lost, "write"), map[bool]string{true: "was", false: "were"}[lost == 1], map[bool]string{true: "it", false: "them"}[lost == 1])
	}
	return out
}

// identityInvariants checks rule S5 on c's attempts: an attempt that
// reached the object carries the call's identity, and a retry takes a new
// identity only when every attempt before it is known not to have reached
// the object (not delivered, not lost on the way); once one may have, every
// later attempt keeps its identity.
func identityInvariants(c runtime.CallRecord, bad func(rule, format string, args ...any)) {
	unreached := true
	for i, a := range c.Attempts {
		if a.Delivered && a.RequestID != c.RequestID {
			bad("S5", "attempt %d reached the object with request identity %s, not the call's", a.N, a.RequestID)
		}
		if i > 0 && !unreached && a.RequestID != c.Attempts[i-1].RequestID {
			bad("S5", "attempt %d has request identity %s after an attempt that may have reached the object", a.N, a.RequestID)
		}
		// Known not to have reached it: not delivered, and not lost on the
		// way (a fault that would strike at the object, not delivered, is
		// one the object never got to: it was reset with the request queued).
		unreached = unreached && !a.Delivered && !a.Cancelled && (a.Fault.Reaches() || !a.Fault.Ambiguous())
	}
}

// lostSuccess is rule L7's invariant, "a caller never saw success for a
// write that was lost": for a call that ended ok or recovered, how many
// writes of the attempt whose reply the caller got (the last) were lost
// (runtime.AttemptRecord.LostWrites); 0 otherwise.
func lostSuccess(c runtime.CallRecord) int {
	if (c.Outcome != transport.OutcomeOK && c.Outcome != transport.OutcomeRecovered) || len(c.Attempts) == 0 {
		return 0
	}
	return c.Attempts[len(c.Attempts)-1].LostWrites
}

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
