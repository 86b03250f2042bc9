package runtime

// The way back: a turn's result becomes the attempt's reply (respond),
// held by the output gate until its writes are durable (rule L7), sent
// after the link's latency (reply), and completes the attempt (complete),
// unless a fault took it.

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/transport"
)

// starting is the moment the method (or fetch handler) starts: a fault
// that strikes while it runs tells the caller now, and the method runs on
// to its end; the Reset fault resets the object now, and the method runs
// on, on the stale instance (rules L3, L4).
func (h *host) starting(f *flight) {
	if f.Fault.Stage() == transport.WhileRunning {
		h.fail(f)
	}
}

// respond sends the turn's outcome back through the link. A fault that
// struck after delivery replaces the reply: the caller learns of the fault
// (the link's words, see transport.Fault.Message), not of the result; a
// fault that resets the object resets it (rule O4).
func (h *host) respond(f *flight, kind wire.FailKind, v any, resp *http.Response, err error) {
	if f.Fault.Stage() >= transport.WhileRunning {
		lostSocket(resp) // the 101 never reaches its caller: the connection drops (rule W5)
		// The link lost the reply, or told the caller while the method
		// ran: the turn still ended, and its writes are durable (rule
		// L7). Left pending, a later turn's failed write would take them.
		if h.ns.r.journaling {
			h.confirmWrites()
		}
		h.fail(f)
		return
	}
	if h.ns.r.journaling { // the output gate (rule L7, gate.go)
		goes, strike := h.outputGate(f)
		if goes {
			h.reply(f, kind, v, resp, err)
		} else {
			lostSocket(resp)
		}
		if strike {
			h.strike()
		}
		replied(f)
		return
	}
	h.reply(f, kind, v, resp, err)
}

// reply sends the object's answer back to the caller: at once, or, when
// the fault plan has a latency distribution, after the reply's own
// latency (transport.FaultPlan.ReplyDelay), so that replies may overtake
// one another. A reply on its way is the caller's: a reset of the object
// (L3), a write that fails after the output gate let the reply go (L7)
// does not take it back. A reply that arrives after a retry's caller gave
// up (its deadline, S9) is dropped, as the caller waits no more; the
// attempt's record ends when the caller learned its fate (or the method
// ended, D3, whichever is later).
func (h *host) reply(f *flight, kind wire.FailKind, v any, resp *http.Response, err error) {
	r := h.ns.r
	d := r.faults.ReplyDelay(transport.Attempt{Seed: r.seed, Call: int(f.Call.Seq), N: f.N})
	if d <= 0 || f.Answered() {
		h.complete(f, kind, v, resp, err)
		return
	}
	h.outcome(f, kind, v, resp, err)
	f.Replied = true
	r.k.FireAfter(d, &f.Done)
}

// fail tells the caller of a fault that struck after delivery, resetting
// the object first for a fault that resets it (rule L3).
func (h *host) fail(f *flight) {
	if !f.Fault.Resets() {
		h.complete(f, wire.FailLink, nil, nil, nil)
		return
	}
	if f.Answered() {
		return // reset already, as the method started
	}
	h.complete(f, wire.FailReset, nil, nil, nil)
	h.resetFor(f.Reset)
}

// complete tells the caller an attempt's fate now, unless it is decided
// already (a reply on its way, Flight.Answered).
func (h *host) complete(f *flight, kind wire.FailKind, v any, resp *http.Response, err error) {
	if f.Answered() || f.Lost {
		lostSocket(resp) // decided already, or nobody waits: a 101 in it never arrives
		if f.Answered() {
			return
		}
	}
	h.outcome(f, kind, v, resp, err)
	if h.carried == f {
		h.ns.r.k.Rand().Uint64() // the draw of the caller's wake (see courier)
	}
	f.Done.Fire(h.ns.r.k)
}

// outcome sets an attempt's outcome.
func (h *host) outcome(f *flight, kind wire.FailKind, v any, resp *http.Response, err error) {
	if kind == wire.FailSetup && err != nil && !errors.Is(err, ErrSetup) {
		err = fmt.Errorf("%w: %w", ErrSetup, err)
	}
	f.Kind, f.Value, f.Resp, f.Err = kind, v, resp, err
}
