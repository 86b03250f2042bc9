package runtime

// The courier: a speed trick for the link's latency (issue 23), kept
// behind this one type. See BenchmarkCourier for the figures that keep it.

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/dosim/dosim/internal/sched"
)

// A courier is a first attempt's caller carrying its own request down a
// link that delays it: instead of a timer that delivers the attempt when
// it is due, and a task of its own for the turn (a timer's callback runs
// on no task, so host.inline cannot run the turn), the caller's task
// sleeps until the attempt is due, delivers it itself and, when the
// object's gate is free, runs the turn on its own task (host.inline).
//
// It is the same schedule as the timer's: the caller of a first attempt
// waits for its reply whatever happens (S9), yielding its own gate (O3)
// from the moment it sends, as the courier does; the caller's wake takes
// the timer's place among the events, drawing its tie-break at the same
// point; the attempt arrives at the same instant, in the line's order
// (L1: the courier carries only an attempt alone on its line, and one
// sent after it on the line queues behind it as before). Where the timer
// path would draw a tie-break that the courier's does not (the turn's
// task, the caller's wake at the reply), the courier draws it too, so
// that the seeded stream, and with it the trace, stay as they were. What
// differs is that the turn runs as a task that is picked first among the
// events of its instant, as host.inline's does.
//
// A retry is not carried: its caller may stop waiting (the deadline, its
// context), and the attempt must then never arrive (S9).
type courier struct {
	h   *host
	f   *flight
	cur *sched.Task
	at  time.Duration // when the attempt is due
}

// noCourier turns couriers off: every delayed attempt goes by timer
// (BenchmarkCourier, and the test that both paths give the same trace).
var noCourier atomic.Bool

// courierFor returns the courier for first attempt f, due at at, just
// queued on its line, if its caller may carry it: the caller is the
// running task, the attempt is alone on its line, and it is due before
// the end of virtual time.
func (r *Runtime) courierFor(h *host, f *flight, at time.Duration) (courier, bool) {
	cur := r.k.Current()
	if f.N != 1 || cur == nil || len(f.Line.Queue) != 1 || at >= sched.End || noCourier.Load() {
		return courier{}, false
	}
	return courier{h: h, f: f, cur: cur, at: at}, true
}

// carry runs on the caller's task: it yields the caller's gate, sleeps
// until the attempt is due, delivers it unless a timer of the line did
// (an attempt queued behind it and due at the same instant), and waits
// for the reply before it takes its gate back, as the stub's wait would.
// The sleep is a wait for the reply too: a stub that breaks meanwhile
// (L2) fails the attempt at once, and its caller goes on then; the
// attempt, lost, is dropped from the line (host.arrive), as the timer
// would drop it when due (nothing can read the difference: the broken
// stub sends nothing more on its line).
func (c courier) carry() {
	k := c.h.ns.r.k
	cur, f, l := c.cur, c.f, c.f.Line
	left := cur.Leave()
	f.Done.WaitFor(context.Background(), cur, "waiting for a reply", c.at-k.Now()) // the gate is let go already
	if !k.Closed() && len(l.Queue) > 0 && l.Queue[0].F == f {
		prev := c.h.carried
		c.h.carried = f
		c.h.ns.r.deliverHead(c.h, l, false)
		c.h.carried = prev
	}
	if !f.Done.Fired() {
		f.Done.Wait(context.Background(), cur, "waiting for a reply") // the gate is let go already
	}
	cur.Return(left)
}
