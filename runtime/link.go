package runtime

// The way in of a call: an attempt is sent (the fault plan decides its
// fault and latency) and arrives at its object, or is dropped on the way.
// The files of the runtime follow a call forward from here: deliver.go
// makes an arrival a turn, method.go finds and runs what the turn calls,
// reply.go sends its reply back. What each fault means (the stage at which
// it strikes, whether the caller can tell, whether it is retryable, the
// words for it) is package transport's.

import (
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/transport"
)

// objectID is the id's hex form when it has a name (rules may name either),
// computed only when a rule of the fault plan names an object.
func (h *host) objectID() string {
	if h.id.Name() == "" {
		return h.target.Object
	}
	return h.id.String()
}

// send is where an attempt enters the simulated link. A first attempt
// the link delays may be carried by its caller (courier.go) once the
// link has taken it.
func (r *Runtime) send(f *flight) {
	if c, ok := r.post(f); ok {
		c.carry()
	}
}

// post hands f to the link: the output gate of the caller's turn (L7),
// then the fault plan's decision, then the stub's line (L1). It reports
// the courier that is to carry f, if one is.
func (r *Runtime) post(f *flight) (courier, bool) {
	h := f.Host
	if r.journaling {
		from, goes, strike := r.callGate()
		if !goes { // held by the output gate, then discarded (rule L7)
			from.strike()
			f.Reset = transport.ResetStorage
			h.complete(f, wire.FailReset, nil, nil, nil)
			return courier{}, false
		}
		if strike {
			defer from.strike()
		}
	}
	if r.faults == nil {
		f.Call.InFlight++
		return r.transmit(h, f, 0)
	}
	a := transport.Attempt{
		Namespace: f.Target.Namespace,
		Object:    f.Target.Object,
		Method:    f.Req.Method,
		N:         f.N,
		Call:      int(f.Call.Seq),
		Seed:      r.seed,
	}
	if r.faults.NamesObjects() {
		a.ObjectID = h.objectID()
	}
	d := r.faults.DecideAttempt(a)
	f.Fault, f.Reset = d.Fault, d.Reason
	f.Rec.Fault = d.Fault
	f.Call.InFlight++
	return r.transmit(h, f, d.Delay) // in order on the stub's line (L1)
}

// arrive is the moment the link delivers (or drops) an attempt.
func (h *host) arrive(f *flight) {
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
