package runtime

// The object's life (rules L3-L5): an instance is reset (a fault, or
// Namespace.Reset) or evicted when idle; either way its in-memory fields
// are lost, its storage, alarm and tasks survive, and the next event
// constructs a new instance. A request still running on the old instance
// runs on to its end, but that stale instance may no longer touch storage
// (rule L4: at most one live instance per id).

import (
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/transport"
)

// The idle time before eviction is drawn per object in [EvictAfterMin,
// EvictAfterMax] (rule L5).
const (
	EvictAfterMin = 70 * time.Second
	EvictAfterMax = 140 * time.Second
)

// HibernateAfter is how long an object that holds accepted WebSockets
// stays idle before it hibernates (rule W4): its instance is evicted, its
// sockets stay open, and the next event builds a new one. It is workerd's
// inactivity timeout (server.c++, ActorContainer::handleShutdown: "After
// 10 seconds of inactivity, we destroy the Worker::Actor and hibernate any
// active JS WebSockets"; real workerd 1.20261117.1 hibernates a socket's
// object idle 15 s), and the platform's documented 10 s for hibernation.
const HibernateAfter = 10 * time.Second

// WithEviction turns the eviction of idle objects on or off (rule L5; on
// by default, as on the platform).
func WithEviction(on bool) Option { return optionFunc(func(r *Runtime) { r.noEvict = !on }) }

// Reset resets the object with id for reason, as the platform does on a
// deploy, a storage fault or a memory overrun (rule L3): its instance is
// dropped (in-memory fields lost; the next event constructs a new one),
// its storage, alarm and tasks survive, a request running on it fails at
// once with the reason's message (flagged DurableObjectReset, not
// retried), and requests queued at its input gate fail with the same
// error, at once and for good: not retried, their method never runs (as
// on the platform, real workerd 1.20261117.1). A request still running
// keeps running on the stale instance, whose storage refuses it (rule L4).
//
// A request whose turn runs on its caller's own task (delivered without
// latency to a free gate: dosim's fast path) lets its caller go only when
// the method returns; its error is the same.
//
// Call it from a task (Run, Group.Go) or from the test between runs; it
// does not block. An object never built is reset all the same (its
// trace shows the reset).
func (ns *Namespace) Reset(id object.ID, reason transport.ResetReason) error {
	if ns.err != nil {
		return ns.err
	}
	if id.Namespace() != ns.name {
		return fmt.Errorf("%s.Reset: id %s belongs to namespace %q", ns.name, id.Label(), id.Namespace())
	}
	if _, err := transport.ParseResetReason(reason.String()); err != nil {
		return fmt.Errorf("%s.Reset(%s): reason: %w", ns.name, id.Label(), err)
	}
	ns.host(id).resetFor(reason)
	return nil
}

// enter links a delivered request's turn into the host's active turns.
func (h *host) enter(ti *turnInfo) {
	ti.next = h.turns
	if h.turns != nil {
		h.turns.prev = ti
	}
	h.turns = ti
}

// leave unlinks a turn that ended and starts the idle clock (rule L5):
// not after the run stalled under it (rule H1), when its goroutine comes
// back from the method to a runtime that may be closing and must touch
// nothing of it.
func (h *host) leave(ti *turnInfo) {
	if h.ns.r.k.Halted() {
		return
	}
	if ti.prev != nil {
		ti.prev.next = ti.next
	} else if h.turns == ti {
		h.turns = ti.next
	}
	if ti.next != nil {
		ti.next.prev = ti.prev
	}
	ti.prev, ti.next = nil, nil
	h.active()
}

// drop discards the instance (rule O4: storage survives, fields do not) and
// makes the old instance's State stale (rule L4). The alarm and the task
// timers are the host's: they survive too.
func (h *host) drop(why string) {
	if hs := h.ns.r.hist; hs != nil && why != "evicted" {
		hs.cutOpen(h, "reset")
	}
	h.inst, h.methods, h.handler, h.compiled = nil, nil, nil, nil
	h.state = object.Hosting(seal.Key{}).Renew(h.state, why)
}

// resetFor resets the object (rule L3): the instance is dropped, and the
// running request and those queued at the gate fail with the reset error.
// reason NoReset is FailAfterDelivery's reset, which records no event.
func (h *host) resetFor(reason transport.ResetReason) { h.resetWith(reason, "") }

// resetWith is resetFor where the callers of the running and queued
// requests get msg, when it is not empty, as their error's message
// instead of the reason's: the reason given to State.Abort, the error of
// BlockConcurrencyWhile's function.
func (h *host) resetWith(reason transport.ResetReason, msg string) {
	why := reason.String()
	if why == "" {
		why = transport.FailAfterDelivery.String()
	}
	h.drop(why)
	h.countReset()
	if reason != transport.NoReset {
		text := reason.Message()
		if msg != "" {
			text = msg
		}
		h.event(object.Event{Kind: object.EventReset, Reason: reason.String(), Err: text})
	}
	var cause, queued error
	if msg != "" {
		cause = errors.New(msg)
	}
	queued = cause
	if queued == nil && reason == transport.NoReset {
		// A queued request carries no fault of its own: it gets the words
		// of the FailAfterDelivery that reset the object, as the running one.
		queued = errors.New(transport.FailAfterDelivery.Message())
	}
	for ti := h.turns; ti != nil; ti = ti.next {
		f := ti.f
		switch {
		case ti.dropped || f.Answered(): // a reply on its way still arrives
			continue
		case ti.started:
			f.Reset = reason
			h.complete(f, wire.FailReset, nil, nil, cause)
			if ti.ctx != nil {
				// The platform drops the stale code's pending I/O: its
				// waits on the turn's context end now, with the error its
				// storage gives (L4), so that its caller, whose task may be
				// running it (host.inline), goes on at the reset.
				ti.ctx.Interrupt(fmt.Errorf("%w (%s): a new instance serves the object, this one's waits end", object.ErrInstanceReset, why))
			}
		default:
			// Queued at the gate: it reached the object and never runs. As
			// on the platform (real workerd 1.20261117.1) it fails with the
			// running request's error, not retried (0 runs of the method).
			ti.dropped = true
			f.Reset = reason
			h.complete(f, wire.FailReset, nil, nil, queued)
		}
	}
}

// idleLimit is how long the object stays idle before it is evicted: a
// value in [EvictAfterMin, EvictAfterMax] drawn from a hash of the seed
// and the object's id, not from the runtime's seeded source, so that
// eviction leaves every other draw (and so the trace) as it was; for an
// object that holds WebSockets, HibernateAfter (rule W4).
func (h *host) idleLimit() time.Duration {
	if h.ws != nil && len(h.ws.open) > 0 {
		return HibernateAfter // rule W4
	}
	f := fnv.New64a()
	var b [8]byte
	seed := h.ns.r.seed
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	f.Write(b[:])
	f.Write([]byte(h.ns.name))
	raw := rawOf(h.id)
	f.Write(raw[:])
	span := uint64((EvictAfterMax - EvictAfterMin) / time.Millisecond)
	return EvictAfterMin + time.Duration(f.Sum64()%(span+1))*time.Millisecond
}

// active marks the end of a request, task or alarm turn: the object's idle
// time runs from now (rule L5).
func (h *host) active() {
	r := h.ns.r
	h.lastActive = r.k.Now()
	if h.evictArmed || r.noEvict || r.k.Closed() {
		return
	}
	h.evictArmed = true
	r.k.Background(h.idleLimit(), h.evictIfIdle)
}

// busy reports whether a request, task or alarm turn is under way.
func (h *host) busy() bool {
	if h.turns != nil || h.ws != nil && h.ws.turns > 0 {
		return true
	}
	if h.lanes != nil {
		for i := range h.lanes {
			if h.lanes[i].running {
				return true
			}
		}
	}
	return false
}

// evictIfIdle runs when the idle time may have run out: it evicts the
// instance if nothing ran since, or waits on (rule L5). It runs on the
// scheduling goroutine as a background event: it never keeps time moving.
func (h *host) evictIfIdle() {
	h.evictArmed = false
	r := h.ns.r
	if h.inst == nil || h.busy() || r.noEvict {
		return // nothing to evict; the next turn's end arms it again
	}
	limit := h.idleLimit()
	if idle := r.k.Now() - h.lastActive; idle < limit {
		h.evictArmed = true
		r.k.Background(limit-idle, h.evictIfIdle)
		return
	}
	h.drop("evicted")
	h.event(object.Event{Kind: object.EventEvicted, Delay: limit})
}
