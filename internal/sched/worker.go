package sched

import (
	"runtime/debug"
	"sync/atomic"
)

// spawnSlab is how many SpawnContexts one allocation holds at most.
const spawnSlab = 256

// newSpawnContext returns a SpawnContext never handed out before, for t.
func (k *Kernel) newSpawnContext(t *Task) *SpawnContext {
	if len(k.sctxs) == 0 {
		k.nsctx = min(max(2*k.nsctx, 8), spawnSlab)
		k.sctxs = make([]SpawnContext, k.nsctx)
	}
	c := &k.sctxs[0]
	k.sctxs = k.sctxs[1:]
	c.t, c.parent = t, t.parent
	return c
}

// maxSpare bounds Kernel.spare: enough for tasks that end one after
// another, little held after many ended at once.
const maxSpare = 64

// popLast removes and returns the last of *s, or nil when it is empty
// (the kernel's parked workers, its spare Tasks).
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
			go w.loop()
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
		if t.sctx != nil && len(k.spare) < maxSpare {
			t.recycle()
			k.spare = append(k.spare, t)
		}
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
	if t.sctx != nil {
		t.sctx.end()
	}
	t.done.Store(true)
	k.alive--
	k.removeLive(t)
	k.cur.Store(nil)
}

// recycle clears a finished spawned task's Task for reuse by the next
// spawned task. It keeps gen, which only grows: an event left over from
// the task's life stays stale for the next. done is stored atomically:
// a goroutine that kept the task's context may be reading it (Enter).
func (t *Task) recycle() {
	t.id, t.name, t.num, t.parent, t.wake = 0, "", 0, nil, nil
	t.hasEvent, t.blocked, t.why, t.reason = false, false, 0, ""
	t.waitCtx, t.killed = nil, false
	t.live, t.inLive, t.cgroup, t.wait, t.cseq = node[Task]{}, false, nil, node[Task]{}, 0
	t.fn, t.w, t.runner, t.sctx = nil, nil, nil, nil
	t.work, t.queued = nil, nil
	t.done.Store(false)
}

// run runs the task's function and reports whether it returned (or
// panicked) rather than calling runtime.Goexit. A Goexit is the task
// failing: it is kept as a PanicError, and since the goroutine is ending,
// the task is finished and the processor handed on from here.
func (w *worker) run(t *Task) (returned bool) {
	k := w.k
	defer func() {
		if r := recover(); r != nil {
			k.panics = append(k.panics, &PanicError{Task: t.Name(), Value: r, Stack: debug.Stack()})
			returned = true
			return
		}
		if returned || t.killed || k.halted.Load() {
			return
		}
		k.panics = append(k.panics, &PanicError{Task: k.describe(t), Goexit: true})
		k.finish(t)
		w.task = nil
		k.handoff(nil)
	}()
	if r := t.runner; r != nil {
		t.runner = nil
		t.sctx = k.newSpawnContext(t)
		r.Run(t.sctx, t.num)
		return true
	}
	fn := t.fn
	t.fn = nil
	fn(t)
	return true
}
