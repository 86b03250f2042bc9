package runtime

import (
	"github.com/dosim/dosim/object"
)

// eventLog keeps events in chunks of eventChunk, so that recording one
// never copies the ones before it (an Event is a few hundred bytes: a
// growing slice of them would move megabytes in a long run).
type eventLog struct {
	chunks [][]object.Event
	n      int
}

// The chunks start small and double up to eventChunk: a run with an event
// or two (an eviction) does not pay for 256.
const (
	eventChunk      = 256
	firstEventChunk = 4
)

func (l *eventLog) add(e object.Event) {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == cap(l.chunks[k-1]) {
		size := firstEventChunk
		if k > 0 {
			size = min(2*cap(l.chunks[k-1]), eventChunk)
		}
		l.chunks = append(l.chunks, make([]object.Event, 0, size))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, e)
	l.n++
}

// all returns a copy of the events, in order.
func (l *eventLog) all() []object.Event {
	out := make([]object.Event, 0, l.n)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	return out
}

// matching returns a copy of the events keep keeps, in order.
func (l *eventLog) matching(keep func(*object.Event) bool) []object.Event {
	var out []object.Event
	for _, c := range l.chunks {
		for i := range c {
			if keep(&c[i]) {
				out = append(out, c[i])
			}
		}
	}
	return out
}

// event records an event of the object h hosts, stamping it with the
// virtual time and the object.
func (h *host) event(e object.Event) {
	r := h.ns.r
	e.At, e.Namespace, e.Object = r.k.Now(), h.ns.name, h.target.Object
	r.events.add(e)
	switch {
	case e.Kind == object.EventWebSocketDrop:
		// The link's fault, not the object's doing: the turn it struck
		// during does not own it, and its replay draws no fault.
	case r.hist != nil:
		r.noteEvent(h, e)
	case r.replay != nil:
		r.replay.event(e)
	}
}

// Event records a trace event of the object.
func (v hostView) Event(e object.Event) { v.h.event(e) }
