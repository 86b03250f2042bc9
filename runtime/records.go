package runtime

import (
	"fmt"

	"github.com/dosim/dosim/internal/wire"
)

// Records says which call records a runtime keeps for Calls (and so for
// Trace): every one (KeepAll, the default), or the last n begun
// (KeepLast). A record takes about 300 bytes, so a million calls keep
// about 300 MB; with KeepLast the memory stays flat however many calls a
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

// keep adds a call that began to the records, dropping the oldest when
// KeepLast is set. The slice is compacted when it reaches 2n, so a call
// costs O(1) and at most 2n pointers stay reachable.
func (r *Runtime) keep(call *wire.Call) {
	r.calls = append(r.calls, call)
	n := r.records.last
	if n == 0 || len(r.calls) < 2*n {
		return
	}
	m := copy(r.calls, r.calls[len(r.calls)-n:])
	clear(r.calls[m:])
	r.calls = r.calls[:m]
}
