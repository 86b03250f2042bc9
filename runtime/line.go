package runtime

// A stub's connection (rule L1, E-order): the first attempts of the calls
// made through one stub reach the object in the order they were made, even
// when the link delays some of them. A retry travels on a fresh
// connection and may be overtaken.

import (
	"time"

	"github.com/dosim/dosim/internal/sched"
)

// transmit carries f to h after the link's delay. On a stub's line
// (f.Line) f arrives no earlier than the attempts sent on that line before
// it: at max(now+delay, the previous one's arrival). Attempts due at the
// same instant arrive in the order they were sent, whatever order the
// kernel fires their timers in: the first timer to fire delivers every
// attempt that is due, from the head of the queue, and all but the first
// take their places at the object's gate as they arrive (Line.Reserve),
// since the kernel starts the turns of one instant in a seeded order.
//
// A first attempt alone on its line may be carried by its caller instead
// of a timer (courier.go): transmit then returns the courier, for send to
// run once the link has taken f.
func (r *Runtime) transmit(h *host, f *flight, delay time.Duration) (courier, bool) {
	l := f.Line
	if l == nil || (delay <= 0 && len(l.Queue) == 0) {
		if delay > 0 { // a retry, on a connection of its own
			r.k.After(delay, func() { h.arrive(f) })
			return courier{}, false
		}
		h.arrive(f)
		return courier{}, false
	}
	now := r.k.Now()
	at := sched.AddTime(now, delay) // End (never) for a delay past the end of virtual time
	if n := len(l.Queue); n > 0 {
		at = max(at, l.Queue[n-1].At)
	}
	l.Push(lineSlot{F: f, At: at})
	if c, ok := r.courierFor(h, f, at); ok {
		return c, true
	}
	r.k.After(at-now, func() { r.drain(h, l) })
	return courier{}, false
}

// stubLine is a stub's connection to its object (endpoint.line), on which
// its calls' first attempts travel (rule L1). Queue holds the attempts sent
// on the line that have not arrived yet, in the order they were sent, each
// arriving no earlier than the one before it. A retry travels on a fresh
// connection of its own (flight.Line nil).
type stubLine struct {
	Queue []lineSlot
	// Reserve is set while the line delivers an attempt due at the same
	// instant as the one before it: its turn takes its place at the
	// object's gate at once, so that the two keep their order.
	Reserve bool
	// one backs Queue while it holds one attempt, as it mostly does (a
	// first attempt alone on its line): queueing it allocates nothing.
	one [1]lineSlot
}

// lineSlot is an attempt waiting on a line, and when it arrives.
type lineSlot struct {
	F  *flight
	At time.Duration
}

// Push queues q at the end of the line.
func (l *stubLine) Push(q lineSlot) {
	if cap(l.Queue) == 0 {
		l.Queue = l.one[:0]
	}
	l.Queue = append(l.Queue, q)
}

// Pop removes the attempt at the head of the line, which is not empty, and
// returns it. The line keeps nothing of it.
func (l *stubLine) Pop() *flight {
	f := l.Queue[0].F
	l.Queue[0] = lineSlot{}
	l.Queue = l.Queue[1:]
	if len(l.Queue) == 0 {
		l.Queue = l.one[:0]
	}
	return f
}

// drain delivers, in order, the attempts at the head of l's queue that are
// due.
func (r *Runtime) drain(h *host, l *stubLine) {
	now := r.k.Now()
	for n := 0; len(l.Queue) > 0 && l.Queue[0].At <= now; n++ {
		r.deliverHead(h, l, n > 0)
	}
}

// deliverHead delivers the attempt at the head of l's queue, which is
// due; its turn takes its place at the object's gate at once (Reserve)
// when one due before it on the line was delivered this instant (after),
// or one due this instant follows it.
func (r *Runtime) deliverHead(h *host, l *stubLine, after bool) {
	now := r.k.Now()
	f := l.Pop()
	l.Reserve = after || (len(l.Queue) > 0 && l.Queue[0].At <= now)
	h.arrive(f)
	l.Reserve = false
}
