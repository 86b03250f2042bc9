package runtime

import (
	"fmt"

	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/wire"
)

// Records says which call records a runtime keeps for Calls (and so for
// Trace): every one (KeepAll, the default), or the last n begun
// (KeepLast). A record takes about 150 bytes, so a million calls keep
// about 150 MB; with KeepLast the memory stays flat however many calls a
// run makes, and WithRecordSink still sees every record as its call ends.
//
// The checks that read all of a run's records (explore's invariants,
// linearizability, verify) need KeepAll: they see only what Calls returns.
type Records struct {
	last int // 0: every record
	bad  bool
}

// KeepAll keeps the record of every call: the default.
func KeepAll() Records { return Records{} }

// KeepLast keeps the records of the last n calls begun (n >= 1); earlier
// records are dropped and their memory released once their calls end.
// Call numbers (a fault rule's Call) still count every call.
func KeepLast(n int) Records { return Records{last: n, bad: n < 1} }

// String names the policy: "all" or "last 100".
func (p Records) String() string {
	if p.last == 0 && !p.bad {
		return "all"
	}
	return fmt.Sprintf("last %d", p.last)
}

// WithRecords sets which call records the runtime keeps (default
// KeepAll()). A KeepLast below 1 is an error Run returns.
func WithRecords(p Records) Option {
	return optionFunc(func(r *Runtime) {
		if p.bad {
			r.setupErrs = append(r.setupErrs, fmt.Errorf("runtime.WithRecords: KeepLast(%d): n must be >= 1", p.last))
			return
		}
		r.records = p
	})
}

// WithRecordSink hands fn the record of each call as the call ends, in
// the order calls end (Began and Ended in the record give the order they
// began and ended), whatever WithRecords keeps: with KeepLast it streams
// a run of any length, e.g. as JSON Lines. fn runs inside the simulation,
// on the task that ended the call: it must not block on simulated work.
// The record is the call's as it ended; an attempt the caller stopped
// waiting for (a timeout, a cancellation) may still be running then, and
// its End, Executed and LostWrites are as they stood. A call that never
// ends (the run stopped first) is not handed over; Calls has it.
func WithRecordSink(fn func(CallRecord)) Option {
	return optionFunc(func(r *Runtime) { r.sink = fn })
}

// slabRecords is how many call records one allocation holds: a record
// costs no allocation of its own and no pointer to keep it (issue 14: at
// most 3 allocations per fault-free call, at most 160 bytes retained per
// record), and a slab is freed once it is dropped (KeepLast) and none of
// its calls is running.
const slabRecords = 1024

// firstSlab is the size of a runtime's first slab; each next one doubles,
// up to slabRecords: a run of a few calls (an explorer's seed) allocates
// a few records, not a thousand. 128-byte records in power-of-two slabs
// fill their size classes (and, from 64 on, whole pages) exactly.
const firstSlab = 8

// slab is one allocation of records, in the order their calls began, and
// how many of them have begun (a record handed out for a call that failed
// before it began, an argument that cannot be copied, stays empty).
type slab struct {
	recs  []wire.Call
	begun int
}

// newCall returns a zeroed record from the current slab.
func (r *Runtime) newCall() *wire.Call {
	if len(r.free) == 0 {
		n := firstSlab
		if k := len(r.slabs); k > 0 {
			n = min(2*len(r.slabs[k-1].recs), slabRecords)
		}
		r.free = make([]wire.Call, n)
		r.slabs = append(r.slabs, slab{recs: r.free})
		r.dropOld()
	}
	c := &r.free[0]
	r.free = r.free[1:]
	return c
}

// keep counts a call that began in the current slab (the record came from
// it: nothing runs between newCall and Begin).
func (r *Runtime) keep() { r.slabs[len(r.slabs)-1].begun++ }

// dropOld drops the oldest slabs under KeepLast(n) while the later ones
// hold n records or more, so that at most n+2*slabRecords records stay
// reachable however many calls a run makes.
func (r *Runtime) dropOld() {
	n := r.records.last
	if n == 0 {
		return
	}
	kept := 0
	for _, s := range r.slabs[1:] {
		kept += s.begun
	}
	drop := 0
	for drop < len(r.slabs)-1 && kept >= n { // kept: what the slabs after drop hold
		drop++
		kept -= r.slabs[drop].begun
	}
	if drop == 0 {
		return
	}
	m := copy(r.slabs, r.slabs[drop:])
	clear(r.slabs[m:])
	r.slabs = r.slabs[:m]
}

// kept returns the records kept, in the order their calls began: every
// one, or the last n under KeepLast(n).
// CallsBegun returns how many calls have begun so far, those made by
// objects included: the index in Calls the next call's record takes,
// while every record is kept (WithKeepLastCalls keeps fewer).
func (r *Runtime) CallsBegun() int {
	total := 0
	for _, s := range r.slabs {
		total += s.begun
	}
	return total
}

func (r *Runtime) kept() []*wire.Call {
	total := 0
	for _, s := range r.slabs {
		total += s.begun
	}
	skip := 0
	if n := r.records.last; n > 0 && total > n {
		skip, total = total-n, n
	}
	out := make([]*wire.Call, 0, total)
	for _, s := range r.slabs {
		if skip >= s.begun {
			skip -= s.begun
			continue
		}
		for i := range s.recs {
			c := &s.recs[i]
			if c.Began == 0 {
				continue // handed out, never begun
			}
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

// contextsPerSlab is how many sched.Contexts one allocation holds.
const contextsPerSlab = 256

// newTurnContext returns a sched.Context never handed out before, for a turn
// that runs on its caller's task. A context is never reused: a method (or
// a goroutine it started) that keeps its context past the turn holds an
// ended one for good, and gets ErrNotInTask with it. Slabs make that cost
// no allocation of its own.
func (r *Runtime) newTurnContext() *sched.Context {
	if len(r.contexts) == 0 {
		// 8 first, doubling to contextsPerSlab: a run of a few calls (an
		// explorer's seed) allocates a few.
		r.nctx = min(max(2*r.nctx, 8), contextsPerSlab)
		r.contexts = make([]sched.Context, r.nctx)
	}
	c := &r.contexts[0]
	r.contexts = r.contexts[1:]
	return c
}
