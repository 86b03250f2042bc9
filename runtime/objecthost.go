package runtime

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/turn"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
)

// This file is the object host adapter: hostView is what package object
// sees of the host running an object (object.Host), for alarms, and what
// package agent sees of it through object.Hosting, for scheduled and queued
// tasks, retries and shared values.

// hostView is the object.Host the object's State talks to.
type hostView struct{ h *host }

var _ object.Host = hostView{}

func (v hostView) Sleep(ctx context.Context, d time.Duration) error {
	r := v.h.ns.r
	cur, err := r.k.Enter(ctx)
	if err != nil {
		return err
	}
	switch {
	case r.hist != nil:
		r.noteSleep(v.h, d)
	case r.replay != nil:
		r.replay.await(r)
	}
	return cur.Sleep(ctx, d)
}

func (v hostView) Now() time.Time { return v.h.ns.r.clockRead(v.h) }

// Halted reports whether the runtime's watchdog gave up on a stalled
// turn: a SQL statement still running then stops (rule Q5).
func (v hostView) Halted() bool { return v.h.ns.r.k.Halted() }

func (v hostView) Effect(ctx context.Context, kind string, payload any) error {
	return v.h.ns.r.effect(ctx, v.h, kind, payload)
}

// TurnState gives object code running in a request's turn its State.
func (ti *turnInfo) TurnState() *object.State { return ti.h.state }

var _ turn.Turn[*object.State] = (*turnInfo)(nil)

// Rand is the runtime's seeded source.
func (v hostView) Rand() *rand.Rand { return v.h.ns.r.objectRand() }

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

// CheckTask reports an unknown method of the built object, or a payload
// that the method cannot take (rule A6).
func (v hostView) CheckTask(name string, payload any) error {
	h := v.h
	if h.methods == nil {
		return nil
	}
	m, err := find(h.ns.name, h.methods, name)
	if err != nil {
		return err
	}
	return m.fn.CheckPayload(payload)
}

// Invoke runs a task's callback as a request's method runs: the same
// lookup, argument conversion and panic capture. Each attempt gets its
// own copy of the payload (rule O5).
func (v hostView) Invoke(ctx context.Context, name string, payload any) error {
	h := v.h
	if t := sched.FromContext(ctx); t != nil {
		if lt, ok := t.Work().(*laneTurn); ok && lt.h == h {
			if err := h.atInstant(lt.lane); err != nil {
				return err // the run ends at this instant (rule H1)
			}
		}
	}
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
	return readObjectErr(h.ns.name+"/"+h.target.Object+"."+name, err)
}

// SetAlarm sets or deletes the object's alarm. It is one of the turn's
// writes (rule L7): if they are lost, the alarm is put back as it was.
func (v hostView) SetAlarm(at time.Time, ok bool) {
	h := v.h
	prev := h.alarm
	object.Hosting(seal.Key{}).JournalUndo(h.storage, func() {
		h.alarm = prev
		h.setLane(wire.LaneAlarm, prev.at, prev.set)
	})
	d := at.Sub(h.ns.r.start)
	if ok && d < h.ns.r.k.Now() {
		// A time already past is now: getAlarm says so, and it fires at
		// once (O6). What the turn leaves then depends on its instant, so
		// the clamp reads the clock as object code does (recorded, and a
		// replay's reading): a step from one state with one input, and no
		// other read, does not leave one alarm at one instant and another
		// at the next (the checker memoises steps by state and input).
		d = h.ns.r.clockRead(h).Sub(h.ns.r.start)
	}
	if ok && prev.waiting && h.ns.backend != object.KeyValueBacked {
		// A failed delivery waits for its retry: a SQLite-backed object's
		// platform keeps the retry (it comes, counted, at its time),
		// getAlarm shows the new time, and once the retry is delivered
		// nothing follows. A key-value-backed object's new alarm replaces
		// the retry: delivered at its time, retryCount 0 (O6; real workerd
		// 1.20261117.1 under localDisk and inMemory storage,
		// internal/platformtest's alarm-set-during-retry).
		h.alarm.shown, h.alarm.shownSet = d, true
		return
	}
	h.setAlarm(d, ok)
}

// Alarm returns the pending alarm: while a failed delivery waits for its
// retry, the instant the alarm was first due, as the platform's getAlarm
// returns it (or the one a SetAlarm meanwhile asked for); after its last failed delivery, that instant too, to the
// instance that saw it given up (rule O6).
func (v hostView) Alarm() (time.Time, bool) {
	h := v.h
	if !h.alarm.set {
		if g := h.alarm.gaveUp; g != nil && g == h.state {
			return h.ns.r.start.Add(h.alarm.first), true
		}
		return time.Time{}, false
	}
	switch {
	case h.alarm.waiting && h.alarm.shownSet:
		return h.ns.r.start.Add(h.alarm.shown), true
	case h.alarm.waiting:
		return h.ns.r.start.Add(h.alarm.first), true
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

// Shared is the runtime-wide registry of object code's shared values.
func (v hostView) Shared(key string, mk func() any) any {
	r := v.h.ns.r
	r.noteShared(v.h)
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
