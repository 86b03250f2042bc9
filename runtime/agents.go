package runtime

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/wire"
)

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

// TurnState gives object code running in a request's turn its State.
func (ti *turnInfo) TurnState() any { return ti.h.state }

// Rand is the runtime's seeded source.
func (v hostView) Rand() *rand.Rand { return v.h.ns.r.rng }

// Instance builds the object if needed; nil while its constructor runs.
func (v hostView) Instance() (any, error) {
	h := v.h
	if h.building {
		return nil, nil
	}
	if err := h.build(); err != nil {
		return nil, err
	}
	return h.inst, nil
}

// CheckMethod reports an unknown method of the built object.
func (v hostView) CheckMethod(name string) error {
	h := v.h
	if h.methods == nil {
		return nil
	}
	_, err := find(h.ns.name, h.methods, name)
	return err
}

// Invoke runs a task's callback as a request's method runs: the same
// lookup, argument conversion and panic capture. Each attempt gets its
// own copy of the payload (rule O5).
func (v hostView) Invoke(ctx context.Context, name string, payload any) error {
	h := v.h
	if err := h.build(); err != nil {
		return err
	}
	m, err := find(h.ns.name, h.methods, name)
	if err != nil {
		return err
	}
	var args []any
	if payload != nil || m.fn.Arity() != 0 {
		cp, _, err := clone.Copy(payload, nil)
		if err != nil {
			return err
		}
		args = []any{cp}
	}
	in, err := m.fn.Args(ctx, args)
	if err != nil {
		return err
	}
	_, err = m.fn.Call(in)
	return err
}

// SetAlarm sets or deletes the object's alarm.
func (v hostView) SetAlarm(at time.Time, ok bool) {
	h := v.h
	h.setAlarm(at.Sub(h.ns.r.start), ok)
}

// Alarm returns the pending alarm.
func (v hostView) Alarm() (time.Time, bool) {
	h := v.h
	if !h.alarm.set {
		return time.Time{}, false
	}
	return h.ns.r.start.Add(h.alarm.at), true
}

// TasksDue sets the timer of a task lane.
func (v hostView) TasksDue(l wire.Lane, at time.Time, ok bool) {
	if l == wire.LaneAlarm || l >= wire.Lanes {
		return
	}
	h := v.h
	h.setLane(l, at.Sub(h.ns.r.start), ok)
}

// Event records a trace event of the object.
func (v hostView) Event(kind, detail string) { v.h.event(kind, detail) }

// Shared is the runtime-wide registry of object code's shared values.
func (v hostView) Shared(key string, mk func() any) any {
	r := v.h.ns.r
	if x, ok := r.shared[key]; ok || mk == nil {
		return x
	}
	if r.shared == nil {
		r.shared = map[string]any{}
	}
	x := mk()
	r.shared[key] = x
	return x
}
