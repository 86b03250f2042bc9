package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// ChromeTrace writes the reports in the Trace Event Format that Perfetto
// (ui.perfetto.dev) and chrome://tracing open: a JSON object whose
// traceEvents hold, for each report a process (pid from 1), and in it:
//
//   - a track (a thread, "M" metadata names it) per object; attempts that
//     overlap on one object, or start at the same time, go on a second
//     track of it ("NS/obj #2"), so that the slices of a track nest as the
//     format requires and each starts at a time of its own;
//   - a complete slice ("X", category attempt) per attempt, from its start
//     to its end, at least 1 ms wide (chromeMinSlice: a run without
//     latency takes no virtual time, and a slice of width 0 cannot be
//     seen), named after the call and the try ("AddOne try 2"), its link
//     fault, what the object did, the call's outcome and its real virtual
//     duration in args;
//   - inside it a slice (category turn) per attempt the object ran;
//   - a flow arrow (named retry, "s" then "f") from each attempt to the
//     retry after it;
//   - instant events ("I", thread scope) for the faults the link drew, the
//     effects the objects recorded and the events of alarms, retries,
//     tasks and resets.
//
// Timestamps are virtual microseconds since the runtime started.
//
// Two choices make the trace open in Chromium's own DevTools Performance
// panel (the viewer that took over from chrome://tracing) as well as in
// Perfetto and the older catapult viewer. The flow events carry the
// category of the slices they join (attempt), because DevTools binds a
// flow event to the slice of the same category, thread and timestamp.
// Instants are written "I": the format's document calls that letter
// deprecated in favour of "i", but Perfetto and catapult read both, and
// DevTools reads only "I".
func ChromeTrace(w io.Writer, reports ...Report) error {
	t := chromeTrace{Events: []ChromeEvent{}, DisplayTimeUnit: "ms"}
	for i, r := range reports {
		t.add(i+1, r)
	}
	enc := json.NewEncoder(inertJSON{w})
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	return enc.Encode(t)
}

// chromeTrace is the JSON object ChromeTrace writes.
type chromeTrace struct {
	Events          []ChromeEvent `json:"traceEvents"`
	DisplayTimeUnit string        `json:"displayTimeUnit"`
	flows           int           // the flows written so far: the last flow id
}

// ChromeEvent is one event of the Trace Event Format, with the fields
// ChromeTrace uses.
type ChromeEvent struct {
	Name  string         `json:"name"`
	Cat   string         `json:"cat,omitempty"`
	Ph    string         `json:"ph"`            // X complete, I instant, s/f flow, M metadata
	Ts    float64        `json:"ts"`            // microseconds
	Dur   *float64       `json:"dur,omitempty"` // X only
	Pid   int            `json:"pid"`
	Tid   int            `json:"tid"`
	ID    string         `json:"id,omitempty"` // flow events: hexadecimal, unique in the trace
	BP    string         `json:"bp,omitempty"` // "e": the flow ends in the slice enclosing ts
	Scope string         `json:"s,omitempty"`  // instant events: "t" (thread)
	Args  map[string]any `json:"args,omitempty"`
}

// chromeAttempt is the category of the attempt slices and of the flow
// events that join an attempt to its retry (DevTools binds a flow event
// only to a slice of its own category).
const chromeAttempt = "attempt"

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// chromeMinSlice is the least width of an attempt's slice: a run without
// latency has attempts that take no virtual time, and a slice of width 0
// cannot be seen or clicked in a viewer. A slice shorter than this is
// drawn this wide; its args say its real virtual duration.
const chromeMinSlice = time.Millisecond

// shownEnd is where attempt a's slice ends as drawn: its end, or
// chromeMinSlice after its start when it is shorter.
func shownEnd(a runtime.AttemptRecord) time.Duration {
	return a.Start + max(a.End-a.Start, chromeMinSlice)
}

// chromeLane is a track of an object: the start of its last slice and the
// end of its slices.
type chromeLane struct {
	tid        int
	start, end time.Duration
}

// add writes report r as process pid.
func (t *chromeTrace) add(pid int, r Report) {
	t.meta(pid, 0, "process_name", "dosim: "+r.title())
	lanes := map[string][]*chromeLane{} // by object, first lane first
	tids := 0
	lane := func(obj string, start, end time.Duration) int {
		for _, l := range lanes[obj] {
			// A lane takes a slice that starts after its last one
			// started and once its slices have ended: two attempts
			// starting at one time go on two tracks, so that each
			// flow event binds to one slice (DevTools binds it to the
			// slice of its thread, category and timestamp).
			if l.end <= start && l.start < start {
				l.start, l.end = start, max(l.end, end)
				return l.tid
			}
		}
		tids++
		name := obj
		if n := len(lanes[obj]); n > 0 {
			name = fmt.Sprintf("%s #%d", obj, n+1)
		}
		t.meta(pid, tids, "thread_name", name)
		t.Events = append(t.Events, ChromeEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: tids, Args: map[string]any{"sort_index": tids}})
		lanes[obj] = append(lanes[obj], &chromeLane{tid: tids, start: start, end: end})
		return tids
	}
	// Slices in start order, so that a lane's slices follow each other.
	type slot struct{ call, attempt int }
	var slots []slot
	for i, c := range r.Calls {
		for j := range c.Attempts {
			slots = append(slots, slot{i, j})
		}
	}
	sort.SliceStable(slots, func(a, b int) bool {
		return r.Calls[slots[a].call].Attempts[slots[a].attempt].Start < r.Calls[slots[b].call].Attempts[slots[b].attempt].Start
	})
	tidOf := map[slot]int{}
	for _, s := range slots {
		c := r.Calls[s.call]
		a := c.Attempts[s.attempt]
		tid := lane(c.Namespace+"/"+c.Object, a.Start, shownEnd(a))
		tidOf[s] = tid
		t.attempt(pid, tid, r, s.call, a)
	}
	for _, s := range slots { // flow arrows: an attempt to its retry
		if s.attempt == 0 {
			continue
		}
		c := r.Calls[s.call]
		prev, next := c.Attempts[s.attempt-1], c.Attempts[s.attempt]
		// Perfetto reads a flow's string id as a hexadecimal number (and
		// drops the flow when it is not one); flows are matched across
		// the whole trace, so the id is unique in it, not just in pid.
		t.flows++
		id := strconv.FormatInt(int64(t.flows), 16)
		t.Events = append(t.Events,
			ChromeEvent{Name: "retry", Cat: chromeAttempt, Ph: "s", Ts: micros(prev.Start), Pid: pid, Tid: tidOf[slot{s.call, s.attempt - 1}], ID: id},
			ChromeEvent{Name: "retry", Cat: chromeAttempt, Ph: "f", BP: "e", Ts: micros(next.Start), Pid: pid, Tid: tidOf[s], ID: id})
	}
	first := func(obj string) int {
		if ls := lanes[obj]; len(ls) > 0 {
			return ls[0].tid
		}
		return lane(obj, 0, 0)
	}
	for _, e := range r.Effects {
		t.instant(pid, first(e.Namespace+"/"+e.Object), e.At, "effect "+e.Kind, "effect", map[string]any{"payload": jsonValue(e.Payload), "requestId": e.RequestID, "attempt": e.Attempt})
	}
	for _, e := range r.Events {
		t.instant(pid, first(e.Namespace+"/"+e.Object), e.At, string(e.Kind), "event", map[string]any{"detail": e.Text()})
	}
}

// attempt writes attempt a of call i: its slice, the turn inside it if
// the object ran it, and an instant for the link's fault.
func (t *chromeTrace) attempt(pid, tid int, r Report, i int, a runtime.AttemptRecord) {
	c := r.Calls[i]
	dur := micros(shownEnd(a) - a.Start)
	args := map[string]any{"call": i + 1, "label": r.label(i), "attempt": a.N, "requestId": a.RequestID,
		"link": a.LinkText(), "object did": a.DidText(), "outcome": c.Outcome.String(),
		"virtual duration": (max(a.End, a.Start) - a.Start).String()}
	if a.Err != "" {
		args["error"] = a.Err
	}
	name := fmt.Sprintf("%s try %d", c.Method, a.N)
	t.Events = append(t.Events, ChromeEvent{Name: name, Cat: chromeAttempt, Ph: "X", Ts: micros(a.Start), Dur: &dur, Pid: pid, Tid: tid, Args: args})
	if a.Executed || a.Rejected {
		turn := dur
		t.Events = append(t.Events, ChromeEvent{Name: "turn: " + a.DidText(), Cat: "turn", Ph: "X", Ts: micros(a.Start), Dur: &turn, Pid: pid, Tid: tid})
	}
	if a.Fault == transport.None {
		return
	}
	at := a.Start
	if a.Fault.Reaches() { // struck after delivery: at the end
		at = max(a.End, a.Start)
	}
	t.instant(pid, tid, at, "fault "+a.Fault.String(), "fault", map[string]any{"link": a.LinkText()})
}

func (t *chromeTrace) instant(pid, tid int, at time.Duration, name, cat string, args map[string]any) {
	t.Events = append(t.Events, ChromeEvent{Name: name, Cat: cat, Ph: "I", Scope: "t", Ts: micros(at), Pid: pid, Tid: tid, Args: args})
}

func (t *chromeTrace) meta(pid, tid int, kind, name string) {
	t.Events = append(t.Events, ChromeEvent{Name: kind, Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": name}})
}
