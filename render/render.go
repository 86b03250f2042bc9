// Package render shows simulated runs to people and to programs: a text
// timeline for the terminal, JSON call records, a Mermaid sequence diagram,
// and a self-contained HTML page with an SVG timeline.
//
// Every renderer takes a Report: the call records of one run, what the
// calls were (labels), the effects the objects recorded, their storage at
// the end, and the expectations that were checked. Output depends only on
// the Report, never on the wall clock, so the same seed renders the same
// bytes (rule D1).
package render

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/layout"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// Report is one simulated run, as the renderers show it.
type Report struct {
	// Name is the run's title: a scenario's name.
	Name string
	// File is where the run was described, if anywhere.
	File string
	// Description says in a few lines what the run shows.
	Description string
	// Seed is the runtime's seed.
	Seed uint64
	// Calls are the runtime's call records, in start order.
	Calls []runtime.CallRecord
	// Labels says, for each call (same index as Calls), what was called,
	// for example `AddOne("apple")`. It may be shorter than Calls or hold
	// empty strings: the method name stands in. With no labels at all
	// (nil), each call is shown from its record: its method and
	// arguments, `Deposit("tx-1", 50)`.
	Labels []string
	// Effects are the side effects the objects recorded.
	Effects []runtime.Effect
	// Events are what alarms, schedules, queues and agent.Retry did
	// (runtime.Runtime.Events).
	Events []object.Event
	// Storage is the objects' storage at the end of the run.
	Storage []Object
	// Expectations counts the expectations checked; Failures lists those
	// that were not met.
	Expectations int
	Failures     []Failure // in the order they were written
	// Violations are what a checker found in the run (dosim explore's
	// linearizability, liveness ... violations), one a line: the HTML page
	// leads with them.
	Violations []string
}

// Object is one object's storage at the end of a run.
type Object struct {
	Namespace string         // the namespace's name
	Object    string         // the object's name or hex id
	Data      map[string]any // every key and value, copied
}

// Failure is an expectation that was not met: where it was written, what
// it expected and what happened instead.
type Failure struct {
	// Where locates the expectation: "FILE:LINE: calls[1] INVENTORY/shop.AddOne: executions".
	Where string `json:"where"`
	// Want is what was expected; Got is what happened.
	Want string `json:"expected"`
	Got  string `json:"got"` // what happened
}

// String renders the failure on one line: where, expected, got.
func (f Failure) String() string {
	return fmt.Sprintf("%s: expected %s, got %s", f.Where, f.Want, f.Got)
}

// label returns what call i was, for a person; a call an object made
// says which ("Charge(5) (by LIMITER/l)").
func (r *Report) label(i int) string {
	c := r.Calls[i]
	by := ""
	if c.By != "" {
		by = " (by " + c.By + ")"
	}
	if i < len(r.Labels) && r.Labels[i] != "" {
		return r.Labels[i] + by
	}
	if r.Labels != nil || c.Args == nil {
		return c.Method + by
	}
	return CallText(c.Method, c.Args) + by
}

// CallText writes a call as a person reads it: the method and its
// arguments, each through Value: `Deposit("tx-1", 50)`.
func CallText(method string, args []any) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = Value(a)
	}
	return method + "(" + strings.Join(parts, ", ") + ")"
}

// title is the report's heading.
func (r *Report) title() string {
	name := r.Name
	if name == "" {
		name = "run"
	}
	return fmt.Sprintf("%s (seed %d)", name, r.Seed)
}

// Ms formats a virtual time as the timelines, diagrams and
// runtime.WriteTable do, in Go's duration syntax at every scale: "0s",
// "379ms", "2.347s", "1h0m1.862s".
func Ms(d time.Duration) string { return layout.Ms(d) }

// effectKey identifies the attempt that recorded an effect.
type effectKey struct {
	req     string
	attempt int
}

// effectsByAttempt counts the effects each attempt recorded, by kind.
func effectsByAttempt(effects []runtime.Effect) map[effectKey][]string {
	out := map[effectKey][]string{}
	for _, e := range effects {
		if e.RequestID == "" {
			continue
		}
		k := effectKey{e.RequestID, e.Attempt}
		out[k] = append(out[k], e.Kind)
	}
	return out
}

// kindsText summarises effect kinds: "1 email", "2 email, 1 charge".
func kindsText(kinds []string) string {
	if len(kinds) == 0 {
		return ""
	}
	count := map[string]int{}
	var order []string
	for _, k := range kinds {
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d %s", count[k], k)
	}
	return strings.Join(parts, ", ")
}

// Value renders a call argument, a stored value or an effect payload
// compactly, as JSON when it can, through Escape. A value that contains
// itself, nests deeper than 100 levels or has more than 100,000 parts
// (shared parts counted each time) is written within those bounds, a cycle
// as "<cycle>", a part too deep as "...", at most 64 KiB of it.
func Value(v any) string {
	if !tame(v) {
		return Escape(wild(v))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Escape(fmt.Sprint(v))
	}
	return Escape(string(b))
}

// sortedKeys returns m's keys in byte order, as storage lists them.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// callOfRequest maps request identities to call indexes.
func (r *Report) callOfRequest() map[string]int {
	out := make(map[string]int, len(r.Calls))
	for i, c := range r.Calls {
		out[c.RequestID] = i
	}
	return out
}

// outcomeClass sorts outcomes into good, warn (the call failed but nothing
// was done twice) and bad.
func outcomeClass(outcome transport.Outcome) string {
	switch outcome {
	case transport.OutcomeOK, transport.OutcomeRecovered:
		return "good"
	case transport.OutcomeDuplicateRejected:
		return "warn"
	case transport.OutcomePending:
		return "none"
	}
	return "bad"
}
