package sched

import (
	"cmp"
	"context"
	goruntime "runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// Task is one simulated thread of control.
type Task struct {
	// The fields are laid out with the small ones together, so that a
	// Task fits in 240 bytes (a size class of Go's allocator) and a
	// hundred thousand of them hold no padding.
	k    *Kernel
	id   uint64
	name string
	wake chan Wake

	gen     uint64 // bumped whenever the task's pending event changes
	reason  string
	waitCtx context.Context

	num      uint32      // with name, when > 0: "name num" (see Spawn)
	done     atomic.Bool // read by Enter from any goroutine
	hasEvent bool        // a valid event for this task is in the heap
	blocked  bool
	// ctxWait: the task blocked with a Context of its own (a life's,
	// Begin's), so that Context.Interrupt may end the wait.
	ctxWait bool
	why     Wake // reason delivered with the pending ready event
	killed  bool
	inLive  bool // in the kernel's live list

	// The kernel's lists: live tasks (live) and, while it waits on a
	// cancellable context, its cancel group (cgroup, wait) and
	// the order it joined the groups in (cseq). Intrusive, so that a task
	// leaves either list in O(1) however many tasks there are.
	live   node[Task]
	cgroup *cancelGroup
	wait   node[Task]
	cseq   uint64
	// fn is what the task runs, until it first runs; w is its worker,
	// from then on (see resume).
	fn func(ctx context.Context)
	w  *worker
	// runner runs the task (with num), for a task started with Spawn,
	// until it first runs.
	runner Runner
	// life is the context the task's function got, ended when the task
	// ends: ctx.
	life *Context
	ctx  Context

	// work is what the owner runs on the task (SetWork).
	work Work
	// queued is the gate whose line the task is in (Gate.Acquire, Reserve).
	queued *Gate
}

// Name returns the task's name, as used in deadlock reports.
func (t *Task) Name() string {
	if t.num == 0 {
		return t.name
	}
	return t.name + " " + strconv.FormatUint(uint64(t.num), 10)
}

// Kernel returns the kernel the task belongs to.
func (t *Task) Kernel() *Kernel { return t.k }

// Finished reports whether the task has finished.
func (t *Task) Finished() bool { return t.done.Load() }

// Go starts fn as a new task, runnable at the current instant. It may be
// called by the running task, by a callback, or by the driver before Run.
// fn runs with the task's Context: ctx with the task attached. A panic that escapes fn
// ends the task and is kept for TakePanics.
func (k *Kernel) Go(ctx context.Context, name string, fn func(ctx context.Context)) *Task {
	if ctx == nil {
		ctx = context.Background()
	}
	k.nextID++
	t := &Task{k: k, id: k.nextID, name: name}
	t.ctx.start(t, ctx)
	t.life = &t.ctx
	if k.closed.Load() || k.halted.Load() {
		t.ctx.End()
		t.done.Store(true)
		return t
	}
	k.alive++
	t.blocked = true
	t.reason = "starting"
	t.fn = fn
	if k.pct != nil {
		k.pct.prio[t] = k.pctDraw()
	}
	k.ready(t, WokenBySignal)
	return t
}

// Runner runs the tasks started with Spawn: tasks that share one context
// and name and are told apart by a number. Until such a task first runs it
// is only an event (40 bytes, with no pointers) and a share of the
// Runner's slot; it gets a Task when it runs. 100,000 tasks started
// together then hold little memory, and the collector little to mark,
// while they wait (issue 14).
type Runner interface {
	// Context returns the context the tasks run with and the name they are
	// reported by ("name num").
	Context() (context.Context, string)
	// Run runs task number num with ctx, a Context: the Runner's
	// context, carrying the task until it ends.
	Run(ctx context.Context, num uint32)
}

// Spawn starts task number num of r, runnable at the current instant; r
// must be a pointer (Spawn compares it with the last Runner's). The task
// is named "name num", or name alone for num 0. Spawn draws the same
// tie-break as Go, at the same point: which of the two starts a task
// changes nothing in a run's order. The number is kept in 32 bits: it is
// the task's name and r's to interpret, and more than 2^32 tasks of one
// Runner waiting at once would not fit in memory anyway.
func (k *Kernel) Spawn(r Runner, num uint32) {
	k.nextID++
	if k.closed.Load() || k.halted.Load() {
		return
	}
	k.alive++
	k.keepAlive++
	var slot uint32
	if k.runner == r {
		slot = k.runSlot
		k.refs[slot].n++
	} else {
		slot = k.hold(r)
		k.runner, k.runSlot = r, slot
	}
	k.push(event{at: k.now, kind: evStart, arg: k.nextID, num: num, ref: slot, keepAlive: true})
}

func (k *Kernel) removeLive(t *Task) {
	if t.inLive {
		k.live.remove(t, liveNode)
		t.inLive = false
	}
}

// liveTasks returns the live tasks that have run, in start order.
func (k *Kernel) liveTasks() []*Task {
	out := make([]*Task, 0, k.live.n)
	for t := k.live.head; t != nil; t = t.live.next {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Task) int { return cmp.Compare(a.id, b.id) })
	return out
}

// The nodes that link tasks and cancel groups into the kernel's lists.
func liveNode(t *Task) *node[Task] { return &t.live }

func waitNode(t *Task) *node[Task] { return &t.wait }

func groupNode(g *cancelGroup) *node[cancelGroup] { return &g.link }

// Block parks the running task t until Ready is called for it or ctx is
// cancelled (if ctx can be). The caller records what it waits on before
// calling Block so that the waker can find it. Once the kernel is closed
// Block returns WokenByCancel at once, or never returns (the goroutine
// exits) if it was parked.
func (t *Task) Block(ctx context.Context, reason string) Wake { return t.block(ctx, reason, noTimer) }

// BlockFor is Block with a timer: it also returns, with WokenByTimer, once
// timeout (at least 0) of virtual time has passed.
func (t *Task) BlockFor(ctx context.Context, reason string, timeout time.Duration) Wake {
	return t.block(ctx, reason, max(timeout, 0))
}

// noTimer is block's timeout for a wait without a timer (Block).
const noTimer = time.Duration(-1)

// block is Block and BlockFor: timeout is noTimer, or the timer's.
func (t *Task) block(ctx context.Context, reason string, timeout time.Duration) Wake {
	k := t.k
	if k.halted.Load() {
		// The run stalled and this goroutine (the stalled task, come back)
		// must not touch the kernel again: it ends here.
		goruntime.Goexit()
	}
	if k.cur.Load() != t {
		return WokenOutside // not the running task: do not touch the kernel
	}
	if k.closed.Load() {
		return WokenByCancel
	}
	if c, ok := ctx.(*Context); ok && c.interrupted() {
		return WokenByCancel // interrupted (Context.Interrupt): no more waits
	}
	if ctx != nil && ctx.Done() != nil {
		if ctx.Err() != nil {
			return WokenByCancel
		}
		t.waitCtx = ctx
		k.addCancel(t, ctx.Done())
	}
	t.blocked = true
	t.reason = reason
	_, t.ctxWait = ctx.(*Context)
	if timeout >= 0 {
		at := k.now + timeout
		if timeout >= End-k.now { // never (see End)
			at, t.reason = End, reason+" (until past the end of virtual time)"
		}
		t.gen++
		t.hasEvent = true
		k.keepAlive++
		k.pushTask(t, event{at: at, kind: evTask, ref: k.hold(t), arg: t.gen, keepAlive: true})
	}
	k.cur.Store(nil)
	k.handoff(t)
	w := <-t.wake
	if w == killSignal {
		t.killed = true
		goruntime.Goexit()
	}
	return w
}

// Ready makes a blocked task runnable at the current instant. It is a no-op
// for a task that is not blocked (already readied, running or finished).
func (k *Kernel) Ready(t *Task) { k.ready(t, WokenBySignal) }

func (k *Kernel) ready(t *Task, why Wake) {
	if t == nil || !t.blocked || t.done.Load() || k.closed.Load() {
		return
	}
	t.blocked, t.ctxWait = false, false
	k.dropCancel(t)
	if t.hasEvent {
		k.keepAlive-- // its timer is now stale
	}
	t.gen++
	t.hasEvent = true
	t.why = why
	k.keepAlive++
	k.pushTask(t, event{at: k.now, kind: evTask, ref: k.hold(t), arg: t.gen, keepAlive: true})
}
