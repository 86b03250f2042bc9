package sched

import (
	"runtime/debug"
	"sync/atomic"
)

// popLast removes and returns the last of *s, or nil when it is empty
// (the kernel's parked workers, the pool's spare Tasks).
func popLast[T any](s *[]*T) *T {
	n := len(*s)
	if n == 0 {
		return nil
	}
	x := (*s)[n-1]
	(*s)[n-1] = nil
	*s = (*s)[:n-1]
	return x
}

// resume hands the processor to t, waking it with why. A task gets its
// worker only here, when it first runs: a task that finishes without
// blocking gives its worker back before the next one starts, so n tasks
// started together and run one after another share one goroutine (and
// its grown stack) instead of parking n of them.
func (k *Kernel) resume(t *Task, why Wake) {
	k.cur.Store(t)
	if t.w == nil {
		w := popLast(&k.workers)
		if w == nil {
			w = &worker{k: k, wake: make(chan Wake, 1)}
			k.wg.Add(1)
			k.started++
			if k.started <= deepWorkers && !shallowStacks.Load() { // deepStack
				go w.deepLoop()
			} else {
				go w.loop()
			}
		}
		w.task = t
		t.wake, t.w = w.wake, w
		k.live.push(t, liveNode)
		t.inLive = true
	}
	k.switches.Add(1) // after what the watchdog reads (see Kernel.wait)
	t.wake <- why     // buffered: fine even when t is the caller's own task
}

// worker is a goroutine that runs tasks one after another. Reusing them
// keeps goroutine creation and stack growth off the path of every call.
type worker struct {
	k    *Kernel
	wake chan Wake
	task *Task
	// gone is set by whoever first accounts for the goroutine's end in
	// the kernel's WaitGroup: the goroutine itself, or the driver when the
	// goroutine stalled and cannot be waited for.
	gone atomic.Bool
}

func (w *worker) loop() {
	k := w.k
	killed := false
	defer func() {
		if killed || (w.task != nil && w.task.killed) {
			k.exitAck <- struct{}{}
		}
		w.done()
	}()
	for {
		if <-w.wake == killSignal {
			killed = true
			return
		}
		t := w.task
		if !w.run(t) {
			// The task called runtime.Goexit: w.run's deferred function
			// finished it and handed the processor on; this goroutine ends.
			return
		}
		if t.killed {
			return
		}
		if k.halted.Load() {
			return // the task stalled and came back after the run ended
		}
		k.finish(t)
		w.task = nil
		k.workers = append(k.workers, w)
		k.handoff(nil)
	}
}

// done accounts once for the end of the worker's goroutine.
func (w *worker) done() {
	if w.gone.CompareAndSwap(false, true) {
		w.k.wg.Done()
	}
}

// finish ends t, whose goroutine holds the processor and is about to give
// it up.
func (k *Kernel) finish(t *Task) {
	t.life.End()
	t.done.Store(true)
	k.alive--
	k.removeLive(t)
	if k.pct != nil {
		k.pct.forget(t)
	}
	k.cur.Store(nil)
}

// run runs the task's function and reports whether it returned (or
// panicked) rather than calling runtime.Goexit. A Goexit is the task
// failing: it is kept as a Panic, and since the goroutine is ending,
// the task is finished and the processor handed on from here.
func (w *worker) run(t *Task) (returned bool) {
	k := w.k
	defer func() {
		if r := recover(); r != nil {
			k.panics = append(k.panics, &Panic{Task: t.Name(), Value: r, Stack: debug.Stack()})
			returned = true
			return
		}
		if returned || t.killed || k.halted.Load() {
			return
		}
		k.panics = append(k.panics, &Panic{Task: k.describe(t), Goexit: true})
		k.finish(t)
		w.task = nil
		k.handoff(nil)
	}()
	if r := t.runner; r != nil {
		t.runner = nil
		r.Run(t.life, t.num)
		return true
	}
	fn := t.fn
	t.fn = nil
	fn(t.life)
	return true
}
