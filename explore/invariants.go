package explore

import (
	"fmt"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
)

// Kinds of violation.
const (
	KindInvariant       = "invariant"       // an S rule was broken
	KindExpectation     = "expectation"     // an explore.expect expectation was not met
	KindLinearizability = "linearizability" // an object's history has no sequential explanation
	KindError           = "error"           // the simulation itself failed (deadlock, panic)
)

// Violation is one thing a seed broke.
type Violation struct {
	Seed    uint64 `json:"seed"`
	Kind    string `json:"kind"`
	Rule    string `json:"rule,omitempty"` // the S rule, for an invariant
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
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

// invariants checks the S rules on every call record of a run.
func (e *Explorer) invariants(seed uint64, res *scenario.Result) []Violation {
	var out []Violation
	bad := func(rule string, c runtime.CallRecord, format string, args ...any) {
		out = append(out, Violation{Seed: seed, Kind: KindInvariant, Rule: rule,
			Object:  c.Namespace + "/" + c.Object,
			Message: fmt.Sprintf("%s (request %s): ", c.Method, c.RequestID) + fmt.Sprintf(format, args...)})
	}
	for _, o := range res.Outcomes {
		if o.Call == nil {
			continue
		}
		st := o.Call.Stub
		timeout := time.Duration(st.TimeoutMs) * time.Millisecond
		marked := e.marks[st.Namespace.Name][o.Call.Method]
		for _, idx := range o.Records {
			c := res.Calls[idx]
			if !marked && c.Executions() > 1 {
				bad("S6", c, "an unmarked method ran %d times for one call", c.Executions())
			}
			if len(c.Attempts) > st.MaxRetries+1 {
				bad("S2", c, "%d attempts, more than MaxRetries+1 = %d", len(c.Attempts), st.MaxRetries+1)
			}
			if c.Subrequests != 1 {
				bad("S13", c, "%d subrequests, want 1", c.Subrequests)
			}
			for _, a := range c.Attempts {
				if a.N > 1 && a.Start >= c.Start+timeout {
					bad("S9", c, "attempt %d started at %v, at or after the deadline %v", a.N, a.Start, c.Start+timeout)
				}
				if a.N == 1 && a.Cancelled {
					bad("S9", c, "the first attempt was cancelled")
				}
				if a.RequestID != c.RequestID {
					bad("S5", c, "attempt %d has request identity %s", a.N, a.RequestID)
				}
			}
		}
	}
	return out
}
