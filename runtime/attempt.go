package runtime

// The runtime's side of a call: a stub hands each attempt to its
// connection (an endpoint, stub.Conn), which owns the attempt from then on
// (a flight), carries it down the link (link.go, line.go, courier.go) to
// the object (deliver.go, method.go) and brings its reply back (reply.go).
// The stub keeps
// the policy (retries, identity, breaking, errors: package stub); the two
// meet only in endpoint's methods, as an http.Client meets its
// RoundTripper.

import (
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/turn"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// endpoint is one stub's connection to its object: the runtime's side of
// stub.Conn. A stub's first attempts travel on its line in order (rule L1).
type endpoint struct {
	r *Runtime
	h *host
	// rpc is the RPC target in h that a by-reference stub calls (a
	// *sessionTarget in a session begun by a marked method); nil for a
	// stub of the object itself.
	rpc  object.Target
	line stubLine
	// spare is the flight of the endpoint's last attempt, once nothing of
	// the runtime's holds it (flight.Settled): the next attempt's.
	spare *flight
}

var _ stub.Conn = (*endpoint)(nil)

// newStub mints a stub of h (of its RPC target rpc, when not nil).
func (r *Runtime) newStub(h *host, rpc object.Target, retrying bool, opts ...stub.Option) (*stub.Stub, error) {
	return stub.New(&endpoint{r: r, h: h, rpc: rpc}, retrying, opts...)
}

// flight is one attempt the runtime carries: what the stub sent, where it
// is on its way, and its outcome.
type flight struct {
	Call   *wire.Call
	Target *wire.Target
	Host   *host
	RPC    object.Target // the endpoint's
	Req    wire.Request
	N      int
	Rec    *wire.Attempt
	Body   io.ReadCloser // for fetch: this attempt's body
	Done   sched.Signal
	// Line is the stub's connection the attempt travels on (rule L1); nil
	// for a retry, which goes on a fresh connection.
	Line *stubLine

	// Outcome, set before Done fires.
	Value any
	Resp  *http.Response
	Kind  wire.FailKind
	Fault transport.Fault
	// Reset is why the object was reset under the attempt (FailReset;
	// NoReset for FailAfterDelivery), and, set at send, the reason of a
	// Reset fault.
	Reset transport.ResetReason
	Err   error // the cause (object error, setup error)
	// Lost is set when the caller has stopped waiting (a retry cancelled
	// at the deadline or by the caller's context, rule S9). A lost attempt
	// that has not arrived never arrives; one already at the object has its
	// context cancelled through Cancel.
	Lost bool
	// Replied is set when the object's reply has left it and travels back
	// to the caller with the reply's latency: the outcome is set, Done
	// fires on arrival, and nothing at the object (a reset, a write that
	// fails after the output gate released the reply) changes it any more.
	Replied bool
	// Settled is set when the runtime holds the flight no more: the turn
	// ran on its caller's task and ended, and the reply is in. The
	// endpoint then reuses it for its next attempt.
	Settled bool
	// Cancel, set by the host when it starts a turn for a retry on a task
	// of its own, cancels that turn's context (Abandon).
	Cancel func()
}

// Answered reports whether the attempt's outcome is decided: its reply
// is in, or on its way back (Replied).
func (f *flight) Answered() bool { return f.Replied || f.Done.Fired() }

// Abandon marks the flight lost (the caller stopped waiting) and cancels
// the context of its turn if one is under way (rule S9).
func (f *flight) Abandon() {
	f.Lost = true
	if f.Cancel != nil {
		f.Cancel()
	}
}

// RoundTrip sends one attempt (send) and waits for its reply: the first
// whatever happens (S9), a retry until its deadline or until ctx ends,
// after which the attempt is abandoned.
func (e *endpoint) RoundTrip(ctx context.Context, s wire.Send) (wire.Reply, error) {
	r := e.r
	f := e.spare
	if f != nil {
		e.spare = nil
	} else {
		f = &flight{}
	}
	*f = flight{Call: s.Call, Target: e.h.target, Host: e.h, RPC: e.rpc, Req: s.Req, N: s.N, Rec: s.Rec, Body: s.Body}
	if s.N == 1 {
		f.Line = &e.line // a retry goes on a fresh connection (L1)
	}
	r.send(f)
	cur := r.k.Current()
	var done bool
	if s.N == 1 {
		done = f.Done.Wait(context.Background(), cur, "waiting for a reply")
	} else {
		done = f.Done.WaitFor(ctx, cur, "waiting for a reply", max(s.Deadline-r.k.Now(), 0))
	}
	if !done {
		if r.k.Closed() {
			return wire.Reply{}, sched.ErrClosed
		}
		f.Abandon() // S9: it never arrives, or its turn sees ctx cancelled
		if f.Replied {
			lostSocket(f.Resp) // a 101 on its way back finds nobody (rule W5)
		}
		return wire.Reply{}, nil
	}
	rep := wire.Reply{Answered: true, Value: f.Value, Resp: f.Resp, Kind: f.Kind, Fault: f.Fault, Reset: f.Reset, Err: f.Err}
	if f.Resp != nil {
		if b, ok := f.Resp.Body.(socketBody); ok && b.s != nil {
			b.s.delivered = true // the client end reached its caller (rule W5)
		}
	}
	if f.Settled {
		*f = flight{}
		e.spare = f
	}
	return rep, nil
}

// Break fails the first attempts still waiting on the endpoint's line with
// err (rule L2): they never arrive.
func (e *endpoint) Break(err error) {
	k := e.r.k
	for _, q := range e.line.Queue {
		f := q.F
		if f.Done.Fired() {
			continue
		}
		f.Abandon() // it never arrives (host.arrive drops a lost flight)
		f.Kind, f.Err = wire.FailBroken, err
		f.Done.Fire(k)
	}
}

// Fork returns a connection of its own to the endpoint's object.
func (e *endpoint) Fork() stub.Conn { return &endpoint{r: e.r, h: e.h, rpc: e.rpc} }

// Target names the endpoint's object.
func (e *endpoint) Target() *wire.Target { return e.h.target }

// Enter checks that ctx is the running task of the endpoint's runtime.
func (e *endpoint) Enter(ctx context.Context) (replaying bool, err error) {
	if ctx == nil {
		return false, ErrNotInTask
	}
	if _, err = e.r.k.Enter(ctx); err == nil {
		return false, nil
	}
	if err == sched.ErrNotInTask {
		if t := sched.FromContext(ctx); t != nil {
			_, replaying = t.Work().(turn.CallReplayer)
			if t.Kernel() != e.r.k && !t.Finished() {
				err = &foreignError{target: e.h.target} // unless a replay answers it
			}
		}
	}
	return replaying, err
}

// foreignError is a call through a stub of one runtime from a task of
// another: most often a namespace a constructor captured, which the
// runtimes verify and the model make anew do not have.
type foreignError struct{ target *wire.Target }

// Error names the object and the way out.
func (e *foreignError) Error() string {
	return "dosim: a call to " + e.target.Namespace + "/" + e.target.Object +
		" from a task of another runtime: its stub was made by a namespace of the runtime that defined it, such as one a constructor captured; " +
		"give the class its namespaces as bindings (runtime.WithBinding) and reach them with runtime.Binding(st, NAME), which every runtime (verify's worlds, the explorer's replays) makes anew"
}

// Is makes errors.Is(err, ErrNotInTask) hold: the calling task is not
// one of the stub's runtime.
func (e *foreignError) Is(target error) bool { return target == ErrNotInTask }

// Replay answers a call that a turn replayed alone makes, from its history.
func (e *endpoint) Replay(ctx context.Context, method string, args []any) (any, error, bool) {
	t := sched.FromContext(ctx)
	if t == nil {
		return nil, nil, false
	}
	rp, ok := t.Work().(turn.CallReplayer)
	if !ok {
		return nil, nil, false
	}
	return rp.ReplayCall(e.h.target.Namespace, e.h.target.Object, method, args)
}

// Now is the runtime's virtual time.
func (e *endpoint) Now() time.Duration { return e.r.k.Now() }

// Rand is the runtime's seeded source.
func (e *endpoint) Rand() *rand.Rand { return e.r.k.Rand() }

// Sleep waits d on the running task.
func (e *endpoint) Sleep(ctx context.Context, d time.Duration) (bool, error) {
	k := e.r.k
	if err := k.Current().Sleep(ctx, d); err != nil {
		if k.Closed() {
			return false, sched.ErrClosed
		}
		return false, nil
	}
	return true, nil
}

// InTask returns ErrNotInTask when ctx carries no task.
func (e *endpoint) InTask(ctx context.Context) error {
	if ctx == nil || sched.FromContext(ctx) == nil {
		return ErrNotInTask
	}
	return nil
}

// Go runs fn on a task of its own; wait waits for it, as a stub's promise
// does (Stub.Start).
func (e *endpoint) Go(ctx context.Context, name string, fn func(context.Context)) func() error {
	k := e.r.k
	done := new(sched.Signal)
	k.Go(ctx, name, func(ctx context.Context) {
		defer done.Fire(k)
		fn(ctx)
	})
	return func() error {
		if done.Fired() {
			return nil
		}
		if k.Halted() {
			return sched.ErrStalled
		}
		cur := k.Current()
		if cur == nil {
			return sched.ErrNotInTask
		}
		done.Wait(context.Background(), cur, "awaiting "+name)
		if !done.Fired() {
			return sched.ErrClosed
		}
		return nil
	}
}

// NewRequestID draws a version 4 (random) uuid from the seeded source, laid
// out as uuid.NewRandom lays it out, without allocating.
func (e *endpoint) NewRequestID() uuid.UUID {
	var id uuid.UUID
	pcg := e.r.pcg
	binary.LittleEndian.PutUint64(id[:8], pcg.Uint64()) // rng's own source: the same draws, no interface call
	binary.LittleEndian.PutUint64(id[8:], pcg.Uint64())
	id[6] = (id[6] & 0x0f) | 0x40 // version 4
	id[8] = (id[8] & 0x3f) | 0x80 // variant RFC 4122
	return id
}

// NewCall hands out the next record of the slab.
func (e *endpoint) NewCall() *wire.Call { return e.r.newCall() }

// Begin registers a call: its sequence number, its start, and, for a call
// an object's turn makes, the object that made it.
func (e *endpoint) Begin(call *wire.Call) error {
	c := e.r
	if c.begun >= c.maxCalls {
		return ErrTooManyCalls
	}
	if t := c.k.Current(); t != nil {
		var by *host
		switch w := t.Work().(type) {
		case *turnInfo: // an object's turn calls out
			by = w.h
			if c.callers == nil {
				c.callers = map[*host]struct{}{}
			}
			c.callers[w.h] = struct{}{}
		case *laneTurn: // an alarm, a scheduled or queued task calls out
			by = w.h
		case *wsTurn: // a WebSocket event's handler calls out
			by = w.h
		}
		if by != nil {
			call.SetBy(by.ns.name + "/" + by.target.Object)
		}
		if c.hist != nil {
			c.noteCall(call)
		}
	}
	c.begun++
	call.Seq = c.begun
	call.Start = c.k.Now()
	c.stamp++
	call.Began = c.stamp
	c.keep()
	return nil
}

// End forgets the identity of a finished call once none of its attempts
// can still arrive: nothing can be a duplicate of it any more, so the host
// need not remember it for the rest of the window.
func (e *endpoint) End(call *wire.Call) {
	c := e.r
	c.stamp++
	call.Ended = c.stamp
	if c.sink != nil {
		c.sink(record(call))
	}
	if call.InFlight > 0 || call.NumAttempts() == 0 {
		return
	}
	e.h.forget(call.ID)
}
