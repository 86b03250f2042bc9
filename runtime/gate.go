package runtime

// The object's gates (rules L6, L7). The input gate is the host's
// sched.Gate: a turn holds it except while it awaits a call or a sleep
// (rule O3), and BlockConcurrencyWhile and Transaction keep it closed
// across those too (turn.HoldGate). The output gate is here: a reply,
// and an outgoing call, is released only once the storage writes made
// before it are durable. In virtual time the writes pending at a turn's
// release point (its reply, an outgoing call, Storage.Sync) are confirmed
// there, unless the turn's attempt carries a StorageWriteFails fault: then
// they vanish, the object resets for transport.ResetStorage and the held output is
// discarded. Storage keeps the pending writes only when the fault plan
// names that fault, so a fault-free run pays nothing for the gate.

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/turn"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/transport"
)

// A turn (turnInfo, laneTurn) is its task's sched.Work: a yielding wait
// (a sleep, an awaited call) lets the object's input gate go and takes it
// back after (rule O3), unless BlockConcurrencyWhile or Transaction holds
// it closed (rule L6, turn.HoldGate): the turn's holds counts those.
var (
	_ sched.Work      = (*turnInfo)(nil)
	_ sched.Work      = (*laneTurn)(nil)
	_ turn.GateHolder = (*turnInfo)(nil)
	_ turn.GateHolder = (*laneTurn)(nil)
)

// leaveGate lets h's input gate go for a yielding wait of t, a turn of h
// whose holds are holds, if t holds the gate and nothing holds it closed.
func (h *host) leaveGate(t *sched.Task, holds int32) bool {
	if holds > 0 || h.gate.Owner() != t {
		return false
	}
	h.gate.Release()
	return true
}

// returnGate takes h's input gate back for t after a yielding wait.
func (h *host) returnGate(t *sched.Task) { h.gate.Acquire(t, "waiting to re-enter its object") }

// leaveFor is a turn's Leave: leaveGate, and the wait recorded in the
// turn's history (log, nil without) when the gate went (Turn.Awaits).
func (h *host) leaveFor(t *sched.Task, holds int32, log *turnLog) bool {
	left := h.leaveGate(t, holds)
	if left && log != nil {
		h.ns.r.openAwait(log)
	}
	return left
}

// returnFor is a turn's Return: returnGate, and the end of the wait
// recorded in the turn's history.
func (h *host) returnFor(t *sched.Task, log *turnLog) {
	h.returnGate(t)
	if log != nil {
		h.ns.r.closeAwait(log)
	}
}

// holdGate runs fn with a turn's holds one more meanwhile.
func holdGate(holds *int32, fn func() error) error {
	*holds++
	defer func() { *holds-- }()
	return fn()
}

// Leave lets the gate go for a yielding wait (sched.Work).
func (ti *turnInfo) Leave(t *sched.Task) bool { return ti.h.leaveFor(t, ti.holds, ti.log) }

// Return takes the gate back after the wait (sched.Work).
func (ti *turnInfo) Return(t *sched.Task) { ti.h.returnFor(t, ti.log) }

// HoldGate runs fn with the gate kept closed (turn.GateHolder).
func (ti *turnInfo) HoldGate(fn func() error) error { return holdGate(&ti.holds, fn) }

// Leave lets the gate go for a yielding wait (sched.Work).
func (lt *laneTurn) Leave(t *sched.Task) bool { return lt.h.leaveFor(t, lt.holds, lt.log) }

// Return takes the gate back after the wait (sched.Work).
func (lt *laneTurn) Return(t *sched.Task) { lt.h.returnFor(t, lt.log) }

// HoldGate runs fn with the gate kept closed (turn.GateHolder).
func (lt *laneTurn) HoldGate(fn func() error) error { return holdGate(&lt.holds, fn) }

// startJournal makes h's storage keep its unconfirmed writes when a write
// can fail (the plan names StorageWriteFails).
func (h *host) startJournal() {
	if !h.ns.r.faults.Names(transport.StorageWriteFails) {
		return
	}
	object.Hosting(seal.Key{}).StartJournal(h.storage, h.writer, h.sync, h.strike)
	h.ns.r.journaling = true
}

// writer names the turn making a storage write: the running task's turn,
// or nil outside any turn (a test between runs), whose write is durable
// at once.
func (h *host) writer() any {
	if cur := h.ns.r.k.Current(); cur != nil {
		if w := cur.Work(); w != nil {
			return w
		}
	}
	return nil
}

// outputGate is a release point of the turn whose attempt is f (nil for
// an alarm or task turn, which no fault strikes): its reply, an outgoing
// call or a Sync. With no write pending, or no StorageWriteFails fault on
// f, the pending writes are confirmed and the output goes. Otherwise the
// write fails (strike): if every pending write allowed an unconfirmed
// output, the output still goes, before the writes are lost; else it is
// held, and discarded. The caller sends the output when goes is set, then
// calls strike when it is set.
func (h *host) outputGate(f *flight) (goes, strike bool) {
	j := object.Hosting(seal.Key{}).Journal(h.storage)
	if j == nil {
		return true, false
	}
	n, held := j.Pending()
	if n == 0 || f == nil || f.Fault != transport.StorageWriteFails {
		j.Confirm()
		return true, false
	}
	f.Fault = transport.None // spent: it strikes once
	return !held, true
}

// confirmWrites is the release point of a background turn's completion
// (an alarm delivery, a run of scheduled or queued tasks: rule L7). The
// platform's alarm completes only once its writes are durable, so the
// writes pending there are confirmed, and no later failure can take them
// back; one that struck before, while the turn ran, reset the object under
// it and failed the delivery, which is retried (rule O6). No fault strikes
// a background turn's own release points.
func (h *host) confirmWrites() {
	if j := object.Hosting(seal.Key{}).Journal(h.storage); j != nil {
		j.Confirm()
	}
}

// strike makes the pending writes vanish, each writer's attempt recording
// them as lost, and resets the object for transport.ResetStorage: a request still
// running fails with the reset error, and so do those queued at the gate.
func (h *host) strike() {
	h.loseWrites()
	h.resetFor(transport.ResetStorage)
}

// release lets the object's input gate go at a turn's end: not after the
// run stalled under the turn (rule H1), when the turn's goroutine comes
// back to a runtime that may be closing (the gate's next waiter is the
// kernel's to wake, and the kernel is done).
func (h *host) release() {
	if !h.ns.r.k.Halted() {
		h.gate.Release()
	}
}

// loseWrites makes the pending writes vanish, each writer's attempt
// recording them as lost.
func (h *host) loseWrites() {
	for _, by := range object.Hosting(seal.Key{}).Journal(h.storage).Lose() {
		if ti, ok := by.(*turnInfo); ok {
			ti.f.Call.LoseWrite(ti.f.Rec)
		}
		noteLost(by)
	}
}

// replied ends a request turn's output gate: a StorageWriteFails fault
// that found no write to fail leaves no trace in the attempt's record.
func replied(f *flight) {
	if f.Fault == transport.StorageWriteFails {
		f.Fault, f.Rec.Fault = transport.None, transport.None
	}
}

// sync is Storage.Sync's wait (rule L7): a release point of the running
// turn that waits for every pending write, allowed unconfirmed or not.
func (h *host) sync(ctx context.Context) error {
	var f *flight
	if cur := h.ns.r.k.Current(); cur != nil {
		if ti, ok := cur.Work().(*turnInfo); ok && ti.h == h {
			f = ti.f
		}
	}
	if _, strike := h.outputGate(f); strike {
		h.strike()
		return fmt.Errorf("%w: Sync: %s", object.ErrStorage, transport.ResetStorage.Message())
	}
	return nil
}

// callGate is the output gate of an outgoing call made from a turn on the
// running task (see outputGate): it reports whether the call may go and
// whether the write then fails. A call made outside an object turn goes.
func (r *Runtime) callGate() (h *host, goes, strike bool) {
	cur := r.k.Current()
	if cur == nil {
		return nil, true, false
	}
	switch t := cur.Work().(type) {
	case *turnInfo:
		if t.f.Answered() { // its caller was answered: no fault strikes it now
			goes, strike = t.h.outputGate(nil)
		} else {
			goes, strike = t.h.outputGate(t.f)
		}
		return t.h, goes, strike
	case *laneTurn:
		goes, strike = t.h.outputGate(nil)
		return t.h, goes, strike
	case *wsTurn:
		goes, strike = t.h.outputGate(nil)
		return t.h, goes, strike
	}
	return nil, true, false
}

// BlockConcurrencyLimit is how long, in virtual time, the function given
// to BlockConcurrencyWhile may run before the platform cancels it and
// resets the object (rule L6).
const BlockConcurrencyLimit = 30 * time.Second

// BlockConcurrency runs fn with the gate held closed (rule L6) and resets
// the object when fn is still running BlockConcurrencyLimit later. The
// timer is a background one: it draws nothing from the seed, so a run
// whose function returns in time is the run it was.
func (v hostView) BlockConcurrency(ctx context.Context, fn func(ctx context.Context) error) error {
	h := v.h
	st := h.state
	t := h.ns.r.k.Background(BlockConcurrencyLimit, func() {
		if h.state == st {
			h.resetFor(transport.ResetBlockTimeout)
		}
	})
	defer t.Stop()
	return turn.HoldGate(ctx, func() error { return fn(ctx) })
}

// ResetAfterBlock resets the object because BlockConcurrencyWhile's
// function failed with err (rule L6): the running request's caller gets
// err's message, as on the platform.
func (v hostView) ResetAfterBlock(err error) {
	v.h.resetWith(transport.ResetBlockFailed, errText(err, transport.ResetBlockFailed.Message()))
}

// Abort resets the object because its code called State.Abort (rule L3):
// the unconfirmed writes are lost, as when a write fails (L7), and the
// running request's caller gets reason as its error's message, the
// platform's words when reason is empty.
func (v hostView) Abort(reason string) {
	h := v.h
	if object.Hosting(seal.Key{}).Journal(h.storage) != nil {
		h.loseWrites()
	}
	if reason == "" {
		reason = transport.ResetAbort.Message()
	}
	h.resetWith(transport.ResetAbort, reason)
}

// errText is err's message, or def when err is nil, its message empty, or
// its Error method panics (err is object code's).
func errText(err error, def string) (s string) {
	defer func() {
		if recover() != nil {
			s = def
		}
	}()
	if err == nil || err.Error() == "" {
		return def
	}
	return err.Error()
}

// Resets returns how many times the object with id was reset (rule L3):
// by a fault, Namespace.Reset, a failed write (L7), a failed
// BlockConcurrencyWhile (L6) or State.Abort. Evictions are not resets.
func (ns *Namespace) Resets(id object.ID) int { return ns.resets[rawOf(id)] }

// countReset counts a reset of h (Namespace.Resets).
func (h *host) countReset() {
	ns := h.ns
	if ns.resets == nil {
		ns.resets = map[[32]byte]int{}
	}
	ns.resets[rawOf(h.id)]++
}
