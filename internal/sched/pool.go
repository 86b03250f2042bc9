package sched

import "context"

// taskPool is a speed trick, kept behind this one type: the Tasks of
// finished spawned tasks serve the next spawned tasks. The Task of a task
// that just ended is still in the processor's cache, a new one is not,
// and reusing it makes a Task (240 bytes) less garbage per task.
//
// The benchmark that justifies it is runtime's BenchmarkGroupCalls
// (n=100000: a Group of 100,000 spawned tasks, each making a call).
// Measured by removing the pool (a new Task per spawned task, its own
// Context field, one look in Enter), alternating the two test binaries 20
// times on a shared two-core machine: 115 ms an op with the pool, 127
// without (+10%; CPU time 99 and 111 ms, +12%), and 37.8 MB allocated an
// op against 59.2 MB. CallNoFault, CallAmbiguous, ManyObjects and explore's
// ExploreSeed do not move (they spawn few tasks or none); nor do
// BenchmarkGateLine and BenchmarkHandoffFloor (none). Earlier, noisier
// rounds put it at +5% to +17% of CPU time: remove it only after measuring
// again.
//
// What it costs the rest of the kernel: only a spawned task's Task is
// reused (nothing outside the kernel holds it once it has ended, as its
// function got a Context, not the Task, while Go hands the Task to its
// caller); a pooled Task's life gets its Context from the pool's slab,
// never the Task's own field, so that a context kept past its task's end
// stays ended while the Task serves another life; and Kernel.Enter looks
// at its context twice, as a goroutine that read a kept context just
// before the end may find the Task running again.
type taskPool struct {
	spare []*Task   // at most maxSpare
	ctxs  []Context // the contexts handed out next, from a slab
	nctx  int       // the last slab's size, doubling up to contextSlab
}

// maxSpare bounds the pool: enough for tasks that end one after another,
// little held after many ended at once.
const maxSpare = 64

// contextSlab is how many Contexts one allocation holds at most.
const contextSlab = 256

// task returns a Task of k for a spawned task that runs with parent's
// deadline, cancellation and values: a spare one if there is one.
func (p *taskPool) task(k *Kernel, parent context.Context) *Task {
	t := popLast(&p.spare)
	if t == nil {
		t = &Task{k: k}
	}
	if len(p.ctxs) == 0 {
		// 8 first, doubling: a seed's kernel spawns a few tasks.
		p.nctx = min(max(2*p.nctx, 8), contextSlab)
		p.ctxs = make([]Context, p.nctx)
	}
	c := &p.ctxs[0]
	p.ctxs = p.ctxs[1:]
	c.start(t, parent)
	t.life, t.spawned = c, true
	return t
}

// put keeps t, the Task of a spawned task that has finished, for a later
// one, if there is room.
func (p *taskPool) put(t *Task) {
	if len(p.spare) < maxSpare {
		t.recycle()
		p.spare = append(p.spare, t)
	}
}

// recycle clears a finished spawned task's Task for reuse by the next
// spawned task. It keeps gen, which only grows: an event left over from
// the task's life stays stale for the next. done is stored atomically:
// a goroutine that kept the task's context may be reading it (Enter).
func (t *Task) recycle() {
	t.id, t.name, t.num, t.wake = 0, "", 0, nil
	t.hasEvent, t.blocked, t.why, t.reason = false, false, 0, ""
	t.waitCtx, t.ctxWait, t.killed = nil, false, false
	t.live, t.inLive, t.cgroup, t.wait, t.cseq = node[Task]{}, false, nil, node[Task]{}, 0
	t.fn, t.w, t.runner, t.spawned, t.life = nil, nil, nil, false, nil
	t.work, t.queued = nil, nil
	t.done.Store(false)
}
