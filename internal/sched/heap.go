package sched

import "time"

// event is one pending wake-up, callback, start or target. It holds no
// pointers: what it wakes is in the kernel's refs, at ref. The collector
// then never scans the heap of events, and growing the heap copies plain
// memory, which with 100,000 tasks started together matters (issue 14).
type event struct {
	at time.Duration
	// prio orders the events of one instant. A seeded event's is a draw
	// with the top bit cleared; a Background event's has the top bit set
	// and counts up, so that Background events run after the seeded ones
	// of their instant, in the order they were scheduled.
	prio uint64
	// arg is the task's wait generation this event belongs to (evTask),
	// or the start-order id of the task to start (evStart).
	arg       uint64
	ref       uint32 // index in Kernel.refs (not for evTarget)
	num       uint32 // the number of the task to start (evStart)
	kind      evKind
	keepAlive bool // someone waits for this instant: time may move to it
}

// evKind says what an event does when it comes up.
type evKind uint8

const (
	evTask     evKind = iota // resume refs[ref].p.(*Task)
	evCallback               // run refs[ref].p.(*callback)
	evFire                   // fire refs[ref].p.(*Signal) (FireAfter)
	evStart                  // start task num of refs[ref].p.(Runner); arg is its id
	evTarget                 // the Advance marker
	evAbort                  // the Abort marker
)

// ref is what pending events point at, kept apart from the events so
// that the heap holds no pointers; n counts the events that point at it
// (a Runner's slot is shared by the tasks it starts).
type ref struct {
	p any
	n int
}

func (e *event) before(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.prio < o.prio
}

// stale reports whether e no longer does anything: the task's pending
// event changed since, or the callback was stopped.
func (k *Kernel) stale(e *event) bool {
	switch e.kind {
	case evTask:
		return e.arg != k.refs[e.ref].p.(*Task).gen
	case evCallback:
		return k.refs[e.ref].p.(*callback).cancelled
	}
	return false
}

// hold puts p in a free slot of refs and returns the slot.
func (k *Kernel) hold(p any) uint32 {
	if n := len(k.free); n > 0 {
		i := k.free[n-1]
		k.free = k.free[:n-1]
		k.refs[i] = ref{p: p, n: 1}
		return i
	}
	k.refs = append(k.refs, ref{p: p, n: 1})
	return uint32(len(k.refs) - 1)
}

// release lets go of slot i of refs for one event and returns what it
// held; the slot is free once no event points at it.
func (k *Kernel) release(i uint32) any {
	r := &k.refs[i]
	p := r.p
	if r.n--; r.n == 0 {
		*r = ref{}
		k.free = append(k.free, i)
		if k.runner != nil && i == k.runSlot {
			k.runner = nil
		}
	}
	return p
}

// push adds e to the heap with a fresh seeded tie-break. The draw loses
// its lowest bit (Background events own the top one): two draws keep
// their order unless they differ in that bit alone (one chance in 2^63),
// and even then the heap's shape orders them, the same in every run.
func (k *Kernel) push(e event) {
	e.prio = k.rng.Uint64() >> 1
	if k.pct != nil {
		e.prio >>= 1 // an initial priority (see pct)
	}
	k.pushAt(e)
}

// The events are a 4-ary min-heap on (at, prio): half the levels of
// a binary heap, a node's children side by side, so that 100,000 pending
// tasks cost few cache misses per pop (issue 14). The order is the order
// of the keys, whatever the heap's shape (see push for the one exception).
const arity = 4

// pushAt adds e to the heap with the tie-break it carries.
func (k *Kernel) pushAt(e event) {
	if n := len(k.events); n == cap(k.events) {
		// Double, where append grows a large slice by a quarter: 100,000
		// tasks started at once would copy their events about five times
		// over instead of twice.
		grown := make([]event, n, max(4, 2*n)) // small first: a seed's kernel has few events
		copy(grown, k.events)
		k.events = grown
	}
	k.events = append(k.events, e)
	h := k.events
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / arity
		if !h[i].before(&h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (k *Kernel) pop() event {
	h := k.events
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = event{}
	k.events = h[:n]
	k.down(0)
	return top
}

func (k *Kernel) down(i int) {
	h := k.events
	n := len(h)
	for {
		c := arity*i + 1
		if c >= n {
			return
		}
		m := c
		for j := c + 1; j < c+arity && j < n; j++ {
			if h[j].before(&h[m]) {
				m = j
			}
		}
		if !h[m].before(&h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (k *Kernel) heapify() {
	for i := (len(k.events) - 2) / arity; i >= 0; i-- {
		k.down(i)
	}
}
