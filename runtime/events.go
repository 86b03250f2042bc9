package runtime

import "time"

// Event is one entry of the runtime's typed event log: what alarms,
// object.Retry, scheduled and queued tasks and circuit breakers did. Kind
// is one of the object.Event* constants; Detail is a line of key=value
// pairs. Events are part of Trace, so the same seed gives the same events
// (rule D1).
type Event struct {
	At        time.Duration // virtual time since the runtime started
	Namespace string
	Object    string // the object's name, or its hex id
	Kind      string
	Detail    string
}

// Events returns every event recorded so far, in order.
func (r *Runtime) Events() []Event { return append([]Event(nil), r.events...) }

func (h *host) event(kind, detail string) {
	r := h.ns.r
	r.events = append(r.events, Event{At: r.k.Now(), Namespace: h.ns.name, Object: h.target.Object, Kind: kind, Detail: detail})
}

// Event records a trace event of the object.
func (v hostView) Event(kind, detail string) { v.h.event(kind, detail) }
