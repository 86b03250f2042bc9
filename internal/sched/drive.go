package sched

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// handoff is called by the goroutine giving up the processor (self is the
// blocking task, nil when it finished). It wakes the next task, or the
// driver when the kernel must stop.
func (k *Kernel) handoff(self *Task) {
	next, why, stop := k.pick()
	if stop != 0 {
		k.driver <- stop
		return
	}
	k.resume(next, why)
}

// pick pops events until one resumes a task, running callbacks on the way.
func (k *Kernel) pick() (*Task, Wake, Stop) {
	for {
		k.checkCancels()
		if len(k.events) == 0 {
			return nil, 0, k.idle()
		}
		top := &k.events[0]
		if k.stale(top) {
			k.release(k.pop().ref)
			continue
		}
		if top.at > k.now {
			if k.keepAlive == 0 {
				return nil, 0, k.idle()
			}
			if k.hasLimit && top.at > k.limit {
				return nil, 0, PastLimit
			}
			if top.at == End { // what keeps the run going waits for the end of time
				return nil, 0, OutOfTime
			}
			k.now = top.at
		}
		ev := k.pop()
		if ev.keepAlive {
			k.keepAlive--
		}
		if ev.kind >= evTarget {
			if ev.kind == evAbort {
				k.aborting = false
				return nil, 0, Aborted
			}
			return nil, 0, ReachedTarget
		}
		p := k.release(ev.ref)
		switch ev.kind {
		case evCallback:
			cb := p.(*callback)
			cb.fired = true
			k.runCallback(cb, ev.prio)
		case evFire:
			k.runFire(p.(*Signal), ev.prio)
		case evStart:
			run := p.(Runner)
			ctx, name := run.Context()
			t := &Task{k: k}
			t.ctx.start(t, ctx)
			t.life = &t.ctx
			t.id, t.name, t.num, t.runner = ev.arg, name, ev.num, run
			k.steps++
			if k.pct != nil {
				k.pct.step(t, k.steps, ev.prio, true)
			}
			return t, WokenBySignal, 0
		default:
			t := p.(*Task)
			t.hasEvent = false
			why := t.why
			if t.blocked { // its timer fired
				t.blocked = false
				k.dropCancel(t)
				why = WokenByTimer
			}
			t.why = WokenBySignal
			k.steps++
			if k.pct != nil {
				k.pct.step(t, k.steps, 0, false)
			}
			return t, why, 0
		}
	}
}

func (k *Kernel) idle() Stop {
	if k.alive > 0 {
		return Deadlocked
	}
	return Drained
}

// Abort makes the driver call in progress return Aborted at the next
// switch: once the running task blocks or ends, before anything else due
// at the instant runs. What is pending stays; a later driver call goes on
// from there. It is the hook by which the owner ends a run that must not
// go on (the runtime's instant limit, see runtime.ClockError). Only the running
// task (or a callback) may call it; calling it again before the marker is
// reached does nothing more.
func (k *Kernel) Abort() {
	if k.aborting {
		return
	}
	k.aborting = true
	k.pushAt(event{at: k.now, kind: evAbort}) // prio 0: first at its instant
}

// Blocked describes the live tasks, for deadlock reports.
func (k *Kernel) Blocked() []string {
	// A task that never ran is ready (it has its start event), so a
	// deadlock's blocked tasks are all in live.
	tasks := k.liveTasks()
	out := make([]string, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, fmt.Sprintf("%s: %s", k.describe(t), t.reason))
	}
	return out
}

// Drive runs tasks until the kernel stops, from the driver goroutine
// (never from a task). With target >= 0 it also stops when virtual time
// reaches target, moving time there even if nothing else waits.
func (k *Kernel) Drive(target time.Duration) (Stop, error) {
	if k.closed.Load() {
		return 0, ErrClosed
	}
	if k.halted.Load() {
		return 0, fmt.Errorf("%w: the run stalled before; only Close works now", ErrStalled)
	}
	if k.driving {
		return 0, errors.New("dosim: Run or Advance called while the simulation is already running (from inside a task, use Sleep)")
	}
	if target >= End {
		return 0, fmt.Errorf("%w: the target %v is past the end of virtual time (the last instant is %v)", ErrClockStuck, target, End-1)
	}
	k.driving = true
	defer func() { k.driving = false }()
	if target >= 0 {
		k.keepAlive++
		// Last at its instant: what falls due at the target runs before
		// Drive returns (a tie-break drawn from the seed made it a coin
		// toss, and Quiesce in steps lost a delivery at a step's end).
		k.pushAt(event{at: target, kind: evTarget, keepAlive: true, prio: math.MaxUint64})
	}
	next, why, stop := k.pick()
	if stop == 0 {
		k.resume(next, why)
		var err error
		if stop, err = k.wait(); err != nil {
			return stop, err
		}
	}
	k.cur.Store(nil)
	if stop != ReachedTarget && target >= 0 {
		// Drop the unreached marker so it does not keep time moving later.
		// (The target keeps time moving, so only a limit, the end of time or
		// an abort stops a driver call short of it: the clock stays.)
		k.dropTargets()
	}
	return stop, nil
}

func (k *Kernel) dropTargets() {
	kept := k.events[:0]
	for _, e := range k.events {
		if e.kind == evTarget {
			k.keepAlive--
			continue
		}
		kept = append(kept, e)
	}
	k.events = kept
	k.heapify()
}

// Close ends every goroutine the kernel started and waits for them. Parked
// tasks exit without running further; deferred functions in them see a
// closed kernel (blocking calls return ErrClosed at once). Close must be
// called from the driver, never from a task; it is safe to call twice.
func (k *Kernel) Close() error {
	if k.driving {
		return errors.New("dosim: Close called while the simulation is running (call it after Run returns)")
	}
	if k.closed.Load() {
		return nil
	}
	k.closed.Store(true)
	live := k.liveTasks()
	k.live = list[Task]{}
	for _, t := range live {
		if t == k.stuck {
			continue // still running outside the simulation: see Stall
		}
		if t.w == nil {
			t.fn = nil
			continue // never ran: it has no goroutine to end
		}
		t.wake <- killSignal
		<-k.exitAck
	}
	for _, w := range k.workers {
		w.wake <- killSignal
		<-k.exitAck
	}
	k.workers = nil
	k.wg.Wait()
	k.events, k.refs, k.free, k.runner = nil, nil, nil, nil
	return nil
}
