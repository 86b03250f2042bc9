package runtime

// The runtime's end of the simulated link: an attempt is sent (the fault
// plan decides its fault and latency), arrives or is dropped, and its
// reply travels back. What each fault means (the stage at which it
// strikes, whether the caller can tell, whether it is retryable, the
// words for it) is package transport's; the object's side of an arrival
// (gate, construction, duplicate table, turn) is host.go's.

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/transport"
)

// objectID is the id's hex form when it has a name (rules may name either),
// computed only when a fault plan asks.
func (h *host) objectID() string {
	if h.id.Name() == "" {
		return h.target.Object
	}
	return h.id.String()
}

// send is where an attempt enters the simulated link.
func (r *Runtime) send(f *wire.Flight) {
	h := f.Target.Host.(*host)
	if r.faults == nil {
		f.Call.InFlight++
		r.transmit(h, f, 0)
		return
	}
	fault, delay := r.faults.Decide(transport.Attempt{
		Namespace: f.Target.Namespace,
		Object:    f.Target.Object,
		ObjectID:  h.objectID(),
		Method:    f.Req.Method,
		N:         f.N,
		Call:      f.Call.Seq,
	}, r.rng)
	f.Fault = fault
	f.Rec.Fault = fault
	f.Call.InFlight++
	r.transmit(h, f, delay) // in order on the stub's line (L1)
}

// arrive is the moment the link delivers (or drops) an attempt.
func (h *host) arrive(f *wire.Flight) {
	f.Call.InFlight--
	if f.Lost { // S9: a cancelled retry that had not reached the object never arrives
		if f.Call.Finished && f.Call.InFlight == 0 {
			h.forget(f.Req.ID)
		}
		return
	}
	if !f.Fault.Reaches() { // the fault strikes before the object: no code runs
		h.complete(f, wire.FailLink, nil, nil, nil)
		return
	}
	h.receive(f)
}

// starting is the moment the method (or fetch handler) starts: a fault
// that strikes while it runs tells the caller now, and the method runs on
// to its end.
func (h *host) starting(f *wire.Flight) {
	if f.Fault.Stage() == transport.WhileRunning {
		h.complete(f, wire.FailLink, nil, nil, nil)
	}
}

// respond sends the turn's outcome back through the link. A fault that
// struck after delivery replaces the reply: the caller learns of the fault
// (the link's words, see transport.Fault.Message), not of the result; a
// fault that resets the object resets it first (rule O4).
func (h *host) respond(f *wire.Flight, kind wire.FailKind, v any, resp *http.Response, err error) {
	if f.Fault.Stage() >= transport.WhileRunning {
		kind = wire.FailLink
		if f.Fault.Resets() {
			h.reset()
			kind = wire.FailReset
		}
		h.complete(f, kind, nil, nil, nil)
		return
	}
	h.complete(f, kind, v, resp, err)
}

// complete tells the caller an attempt's fate.
func (h *host) complete(f *wire.Flight, kind wire.FailKind, v any, resp *http.Response, err error) {
	if f.Done.Fired() {
		return
	}
	if kind == wire.FailSetup && err != nil && !errors.Is(err, ErrSetup) {
		err = fmt.Errorf("%w: %w", ErrSetup, err)
	}
	f.Kind, f.Value, f.Resp, f.Err = kind, v, resp, err
	f.Done.Fire(h.ns.r.k)
}
