package render

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// JSONReport is the shape JSON writes for one report: the call records
// with their attempts, the effects, the storage at the end and the
// expectations. Times are virtual milliseconds since the runtime started.
// Its fields, and those of the types below, mirror Report and the runtime's
// records (rule D2) under the JSON names shown.
type JSONReport struct {
	Scenario     string       `json:"scenario"`
	File         string       `json:"file,omitempty"`
	Seed         uint64       `json:"seed"`
	Calls        []JSONCall   `json:"calls"`
	Effects      []JSONEffect `json:"effects"`
	Events       []JSONEvent  `json:"events,omitempty"`
	Storage      []JSONObject `json:"storage"`
	Expectations int          `json:"expectations"`
	Failures     []Failure    `json:"failures"`
}

// JSONEvent is something an alarm, schedule, queue or agent.Retry did.
type JSONEvent struct {
	AtMs      float64 `json:"atMs"`
	Namespace string  `json:"namespace"`
	Object    string  `json:"object"`
	Kind      string  `json:"kind"`
	Detail    string  `json:"detail"`
}

// JSONCall is one call record (rule D2).
type JSONCall struct {
	N           int           `json:"n"`
	RequestID   string        `json:"requestId"`
	Namespace   string        `json:"namespace"`
	Object      string        `json:"object"`
	Method      string        `json:"method"`
	Call        string        `json:"call"`
	Args        []any         `json:"args,omitempty"`
	Result      any           `json:"result,omitempty"`
	OneShot     string        `json:"oneShot,omitempty"` // what went by reference (runtime.CallRecord.OneShot)
	StartMs     float64       `json:"startMs"`
	EndMs       float64       `json:"endMs"`
	Subrequests int           `json:"subrequests"`
	Outcome     string        `json:"outcome"`
	Error       string        `json:"error,omitempty"`
	Attempts    []JSONAttempt `json:"attempts"`
}

// JSONAttempt is one attempt record (rule D2).
type JSONAttempt struct {
	N int `json:"n"`
	// RequestID is the identity the attempt carried, given only where it
	// is not its call's: an attempt known not to have reached the object,
	// after which the retry took a new identity (rule S5).
	RequestID string  `json:"requestId,omitempty"`
	StartMs   float64 `json:"startMs"`
	EndMs     float64 `json:"endMs"`
	Fault     string  `json:"fault"`
	Delivered bool    `json:"delivered"`
	Executed  bool    `json:"executed"`
	Rejected  bool    `json:"rejected"`
	Cancelled bool    `json:"cancelled"`
	Error     string  `json:"error,omitempty"`
}

// JSONEffect is one recorded side effect.
type JSONEffect struct {
	AtMs      float64 `json:"atMs"`
	Namespace string  `json:"namespace"`
	Object    string  `json:"object"`
	Kind      string  `json:"kind"`
	Payload   any     `json:"payload"`
	RequestID string  `json:"requestId,omitempty"`
	Attempt   int     `json:"attempt,omitempty"`
}

// JSONObject is one object's storage at the end.
type JSONObject struct {
	Namespace string         `json:"namespace"`
	Object    string         `json:"object"`
	Data      map[string]any `json:"data"`
}

// attemptID is an attempt's identity as JSON gives it: "" when it is its
// call's.
func attemptID(call, attempt string) string {
	if attempt == call {
		return ""
	}
	return attempt
}

func msFloat(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ToJSON converts a report to its JSON shape.
func ToJSON(r Report) JSONReport {
	out := JSONReport{
		Scenario: r.Name, File: r.File, Seed: r.Seed,
		Calls: make([]JSONCall, len(r.Calls)), Effects: make([]JSONEffect, len(r.Effects)),
		Storage: make([]JSONObject, len(r.Storage)), Expectations: r.Expectations, Failures: r.Failures,
	}
	if out.Failures == nil {
		out.Failures = []Failure{}
	}
	for i, c := range r.Calls {
		jc := JSONCall{
			N: i + 1, RequestID: c.RequestID, Namespace: c.Namespace, Object: c.Object, Method: c.Method,
			Call: r.label(i), StartMs: msFloat(c.Start), EndMs: msFloat(c.End), Subrequests: c.Subrequests,
			Outcome: c.Outcome.String(), Error: c.Err, Attempts: make([]JSONAttempt, len(c.Attempts)),
			Args: jsonValues(c.Args), Result: jsonValue(c.Result), OneShot: c.OneShot,
		}
		for j, a := range c.Attempts {
			jc.Attempts[j] = JSONAttempt{N: a.N, RequestID: attemptID(c.RequestID, a.RequestID), StartMs: msFloat(a.Start), EndMs: msFloat(a.End), Fault: a.Fault.String(),
				Delivered: a.Delivered, Executed: a.Executed, Rejected: a.Rejected, Cancelled: a.Cancelled, Error: a.Err}
		}
		out.Calls[i] = jc
	}
	for i, e := range r.Effects {
		out.Effects[i] = JSONEffect{AtMs: msFloat(e.At), Namespace: e.Namespace, Object: e.Object, Kind: e.Kind,
			Payload: jsonValue(e.Payload), RequestID: e.RequestID, Attempt: e.Attempt}
	}
	for _, e := range r.Events {
		out.Events = append(out.Events, JSONEvent{AtMs: msFloat(e.At), Namespace: e.Namespace, Object: e.Object, Kind: string(e.Kind), Detail: e.Text()})
	}
	for i, o := range r.Storage {
		data := make(map[string]any, len(o.Data))
		for k, v := range o.Data {
			data[k] = jsonValue(v)
		}
		out.Storage[i] = JSONObject{Namespace: o.Namespace, Object: o.Object, Data: data}
	}
	return out
}

// JSON writes the reports as indented JSON: always an array of
// JSONReport, one per report, even for one report, so that a program
// reads every output the same way (jq '.[0].calls').
func JSON(w io.Writer, reports ...Report) error {
	enc := json.NewEncoder(inertJSON{w})
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	all := make([]JSONReport, len(reports))
	for i, r := range reports {
		all[i] = ToJSON(r)
	}
	return enc.Encode(all)
}

// jsonValues makes recorded arguments encodable (see jsonValue).
func jsonValues(vs []any) []any {
	if len(vs) == 0 {
		return nil
	}
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = jsonValue(v)
	}
	return out
}

// jsonValue is v if it encodes as JSON, else its text: a value that does
// not encode is shown, not an encoding error, and one outside Value's
// bounds (a cycle, a part nested too deep) is written as Value writes it.
func jsonValue(v any) any {
	if v == nil {
		return nil
	}
	if !tame(v) {
		return wild(v)
	}
	if _, err := json.Marshal(v); err != nil {
		return fmt.Sprint(v)
	}
	return v
}
