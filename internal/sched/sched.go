// Package sched is dosim's deterministic cooperative scheduler and virtual clock.
//
// Every piece of simulated activity (a caller, an attempt, an object turn, a
// backoff sleep) runs as a Task: a goroutine that holds the processor only
// while the Kernel says so. Exactly one task runs at a time. A task gives the
// processor up only at a simulation blocking point (Block and what is built on
// it), and the kernel then picks the next event: the earliest in virtual time,
// ties broken by a draw from the seeded source. Virtual time jumps straight to
// the next event, so a ten-second sleep costs nothing.
//
// Control passes directly from the task that blocks to the task that runs
// next (one channel handoff per switch); the goroutine that called Run or
// Advance (the driver) sleeps until the kernel has nothing more to do.
//
// Time only moves forward while something waits for it: a keep-alive event
// (a sleeping task, in-flight link latency, an Advance target). Background
// events (alarms) fire when time reaches them, but never pull time forward on
// their own, so Run returns once in-flight work has drained.
package sched

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by blocking calls once the kernel has been closed.
var ErrClosed = errors.New("dosim: runtime closed")

// ErrNotInTask is returned when a blocking call is made outside a simulated task.
var ErrNotInTask = errors.New("dosim: not inside a simulated task (call it from a function run by Runtime.Run or Group.Go)")

// ErrStalled is what a *Stall is (errors.Is): a task held the processor for
// longer than the stall limit without reaching a simulation blocking point.
var ErrStalled = errors.New("dosim: a task stalled outside the simulation")

// DefaultStallLimit is the stall limit of a new kernel: how long, in wall
// clock time, a task may run without reaching a simulation blocking point
// (a sleep, a call, a wait, its end) before the run is declared stalled.
// An honest turn runs for microseconds, milliseconds at worst under the race
// detector on a loaded machine; ten seconds is thousands of times that, and
// still ends a hung test well inside go test's default ten-minute timeout.
const DefaultStallLimit = 10 * time.Second

// MinStallLimit is the least stall limit the watchdog takes (a limit of 0
// or less turns it off). Below it the wall clock of a busy machine, not
// the simulated code, decides a run: a collection pause, or a process the
// operating system left waiting for a few milliseconds, looks like a task
// that stopped reaching blocking points, and a seed fails or passes by
// the machine's load. A tenth of a second is a hundred times the slowest
// honest turn (a few milliseconds under the race detector on a loaded
// machine), and still ends a test of a hang at once.
const MinStallLimit = 100 * time.Millisecond

// ErrStallLimit is what the error of a stall limit below MinStallLimit is
// (errors.Is).
var ErrStallLimit = errors.New("dosim: stall limit below the watchdog's floor")

// CheckStallLimit returns an error that is ErrStallLimit (errors.Is) for a
// limit the watchdog does not take: above 0 and below MinStallLimit. It
// names the value and what is allowed.
func CheckStallLimit(d time.Duration) error {
	if d > 0 && d < MinStallLimit {
		return stallLimitError{d}
	}
	return nil
}

// stallLimitError is CheckStallLimit's error.
type stallLimitError struct{ d time.Duration }

// Error names the limit and what is allowed.
func (e stallLimitError) Error() string {
	return fmt.Sprintf("%v is below the watchdog's floor of %v: want at least %v (such as 10s), or 0 to turn the watchdog off",
		e.d, MinStallLimit, MinStallLimit)
}

// Is makes errors.Is(err, ErrStallLimit) hold.
func (e stallLimitError) Is(target error) bool { return target == ErrStallLimit }

// End is the end of virtual time: time.Duration's largest value, about
// 292 years after the kernel started. Nothing happens at End or later: the
// last instant is End-1.
//
// The kernel saturates rather than refuses. A wait that would end at or
// past End (a sleep, a timer, a timeout, a link delay: now plus a duration
// near math.MaxInt64, or sleeps that add up past 292 years) is a wait
// until End, and End never comes. Until then it is a wait like any other:
// time moves on for it, through the background work on the way, and its
// context can end it (a sleep "until cancelled" works). A driver call left
// with nothing but such waits stops with OutOfTime (the runtime makes it
// a *runtime.ClockError naming them) instead of wrapping around to a past
// instant, which made the wait end at once and froze the clock. Refusing the
// duration instead would hand the caller an error that a loop which
// ignores it turns into a spin at one instant, the very hang this
// prevents. Driver calls are the exception: their target is refused past
// End (Drive), as the caller asks to move the clock there and nothing
// could.
const End = time.Duration(math.MaxInt64)

// AddTime returns at+d, saturated at End (d < 0 adds nothing): the instant
// a wait of d from at ends, End meaning never.
func AddTime(at, d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return at
	case d >= End-at:
		return End
	}
	return at + d
}

// ErrClockStuck is wrapped by a *runtime.ClockError, and by the error of a
// driver call asked to move the clock past End.
var ErrClockStuck = errors.New("dosim: virtual time cannot move")

// Stall is the watchdog's report of a stall (rule H1): a task held the
// processor for longer than the stall limit, in wall-clock time, without
// reaching a simulation blocking point. Drive returns it as its error
// (errors.Is(err, ErrStalled) holds); package runtime reports it to its
// users as a *runtime.StallError.
type Stall struct {
	Task  string        // the task's name, with the object turn it runs ("turn NS/obj.Method attempt 1")
	Now   time.Duration // the virtual instant of the stall
	Limit time.Duration // the wall-clock stall limit that was reached
}

// Error names the task, the instant and the limit.
func (e *Stall) Error() string {
	return fmt.Sprintf("dosim: stalled at %v: task %q ran for more than %v without reaching a simulation blocking point",
		e.Now, e.Task, e.Limit)
}

// Is makes errors.Is(err, ErrStalled) hold.
func (e *Stall) Is(target error) bool { return target == ErrStalled }

// Panic is a panic that escaped a task, or a task that called
// runtime.Goexit (Goexit is set; Value is nil), as TakePanics reports it;
// package runtime reports it to its users as a *runtime.PanicError.
type Panic struct {
	Task   string
	Value  any
	Stack  []byte
	Goexit bool
}

// Wake says why a blocked task resumed.
type Wake uint8

const (
	// WokenBySignal means another task (or a callback) called Ready.
	WokenBySignal Wake = iota
	// WokenByTimer means the block's timeout elapsed.
	WokenByTimer
	// WokenByCancel means the context passed to Block was cancelled, or the
	// kernel is closing.
	WokenByCancel
	// WokenOutside means Block was called for a task that does not hold the
	// processor (from a goroutine outside the simulation): it did not block.
	WokenOutside

	killSignal Wake = 255
)

// Stop says why a driver call (Run, Advance) returned.
type Stop uint8

const (
	// Drained: no live task is left and nothing in flight waits for time.
	Drained Stop = iota + 1
	// Deadlocked: live tasks remain, all blocked, and no timer can wake them.
	Deadlocked
	// ReachedTarget: the Advance target instant was reached.
	ReachedTarget
	// Stalled: the running task did not reach a blocking point within the
	// stall limit (see Stall). The kernel is halted: only Close works.
	Stalled
	// PastLimit: work that keeps the run going (a task's sleep, a call in
	// flight, a queue) falls due after the limit (SetLimit): time stopped
	// at the last event before it.
	PastLimit
	// OutOfTime: work that keeps the run going waits for End, which never
	// comes (see End): time stopped at the last event before it.
	OutOfTime
	// Aborted: Abort was called; what was pending stays.
	Aborted
)

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

// Kernel owns virtual time and the set of tasks. All of its state is touched
// only by the goroutine that currently holds the processor (a task, or the
// driver while no task runs).
type Kernel struct {
	rng *rand.Rand

	now    time.Duration
	events []event // 4-ary min-heap on (at, prio)
	bgSeq  uint64  // Background events scheduled: orders them (see event.prio)
	// keepAlive counts valid pending events that someone waits for. Time
	// moves forward to a background event only while keepAlive > 0.
	keepAlive int

	// cur is the running task. It is atomic so that a goroutine outside the
	// simulation can read it without a data race (see Enter).
	cur atomic.Pointer[Task]
	// alive counts the tasks started and not finished. live links those
	// of them that have run (have a goroutine), in the order they first
	// ran: a task joins it when it first runs, so that a task that runs
	// to its end without blocking joins and leaves it at its tail, where
	// the neighbours it touches are the ones that just ran (in cache).
	// Whoever needs start order sorts by id (Blocked, Close).
	alive  int
	live   list[Task]
	nextID uint64
	// cancels holds the blocked tasks whose context can be cancelled,
	// grouped by the context's Done channel: checkCancels looks at each
	// channel once per switch, however many tasks wait on it.
	cancels   map[<-chan struct{}]*cancelGroup
	groups    list[cancelGroup] // the groups, in the order they were made
	cancelSeq uint64            // orders the tasks of all groups as they blocked
	fired     []*Task           // scratch for checkCancels

	workers []*worker // parked goroutines ready to run a new task
	driver  chan Stop
	exitAck chan struct{}
	driving bool
	closed  atomic.Bool // read by Enter from any goroutine
	wg      sync.WaitGroup
	panics  []*Panic

	// The watchdog (see Drive). switches is bumped at every handoff, once
	// the next task is set up, and whenever a task publishes what it runs
	// (Touch); the driver declares a stall when it has not moved for
	// stallLimit of wall-clock time (see wait for why it is race-free).
	switches   atomic.Uint64
	stallLimit time.Duration
	halted     atomic.Bool // a stall was declared: nothing more runs
	stuck      *Task       // the task that stalled

	owner any

	// refs holds what pending events point at; free lists its unused
	// slots. An event takes a slot when pushed and gives it back when
	// popped; the tasks of one Runner share one slot, the last Runner's
	// (runner, runSlot), so that starting and picking them touches one
	// slot, not 100,000 scattered ones.
	refs    []ref
	free    []uint32
	runner  Runner
	runSlot uint32
	// spare holds Tasks of finished spawned tasks, for the next spawned
	// tasks (at most maxSpare): the Task of a task that just ended is
	// still in the cache, a new one is not, and reusing it makes 256 bytes
	// less garbage per task. Only a spawned task's Task is reused: nothing
	// outside the kernel holds it once it has ended (its function got a
	// SpawnContext, not the Task), while Go hands the Task to its caller.
	spare []*Task
	// sctxs are the SpawnContexts handed out next, from a slab that
	// doubles up to spawnSlab; nsctx is the last slab's size.
	sctxs []SpawnContext
	nsctx int
	// limit is the instant past which virtual time never moves (SetLimit);
	// 0 when there is none.
	limit    time.Duration
	hasLimit bool
	// aborting: Abort pushed its marker, not yet reached.
	aborting bool
}

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

// SetOwner records the value that owns the kernel (the runtime), for code
// that reaches the kernel from a task's context.
func (k *Kernel) SetOwner(o any) { k.owner = o }

// Owner returns what SetOwner recorded.
func (k *Kernel) Owner() any { return k.owner }

// New returns a kernel drawing its tie-breaks from rng, the runtime's single
// seeded source: every draw happens on the simulated path in a fixed order.
func New(rng *rand.Rand) *Kernel {
	return &Kernel{
		rng:        rng,
		driver:     make(chan Stop),
		exitAck:    make(chan struct{}),
		stallLimit: DefaultStallLimit,
	}
}

// SetLimit sets the instant, in virtual time since the kernel started,
// past which time never moves: a driver call whose work would go on past
// it returns PastLimit. ok false removes the limit.
func (k *Kernel) SetLimit(at time.Duration, ok bool) { k.limit, k.hasLimit = at, ok }

// SetStallLimit sets the watchdog's wall-clock stall limit; d <= 0 turns
// the watchdog off. A limit below MinStallLimit is refused (the limit
// stays as it was) with an error wrapping ErrStallLimit. The watchdog
// reads the wall clock only to end a hang: it never changes what a run
// that does not stall computes.
func (k *Kernel) SetStallLimit(d time.Duration) error {
	if err := CheckStallLimit(d); err != nil {
		return err
	}
	k.stallLimit = d
	return nil
}

// StallLimit returns the watchdog's stall limit (<= 0: off).
func (k *Kernel) StallLimit() time.Duration { return k.stallLimit }

// Halted reports whether a stall was declared. Any goroutine may call it.
func (k *Kernel) Halted() bool { return k.halted.Load() }

// Touch tells the watchdog that the running task has published something
// the driver may read when it reports a stall (Task.Data): the counter it
// bumps orders the write before the driver's read.
func (k *Kernel) Touch() { k.switches.Add(1) }

// Enter checks that a blocking call made with ctx comes from the running
// simulated task and returns that task. Any goroutine may call it: it
// returns ErrStalled after a stall, ErrClosed after Close, and
// ErrNotInTask when ctx carries no task, when that task has finished, or
// when no task holds the processor.
//
// What the check cannot catch: a goroutine started by simulated code that
// calls while a task holds the processor and ctx carries a live task (the
// goroutine's parent, still running or waiting for it). It cannot be told
// from that task without goroutine identities, which Go does not expose.
// If the parent waits for the goroutine on a raw channel, the call runs in
// its place, deterministically; otherwise the parent and the goroutine race,
// and the watchdog or the race detector is what reports it.
func (k *Kernel) Enter(ctx context.Context) (*Task, error) {
	if k.halted.Load() {
		return nil, ErrStalled
	}
	t := FromContext(ctx)
	cur := k.cur.Load()
	// FromContext again, last: a spawned task's Task is reused once it
	// has ended, so a goroutine that read ctx just before the end may find
	// the Task running again. Its context was ended before the Task was
	// reused (finish, recycle), so the second look sees that.
	if t == nil || cur == nil || t.Finished() || FromContext(ctx) != t {
		return nil, ErrNotInTask
	}
	if k.closed.Load() {
		return nil, ErrClosed
	}
	return cur, nil
}

// Rand returns the seeded source. Use it only while holding the processor.
func (k *Kernel) Rand() *rand.Rand { return k.rng }

// Now returns the virtual time since the kernel started.
func (k *Kernel) Now() time.Duration { return k.now }

// Current returns the running task, or nil when no task holds the processor.
func (k *Kernel) Current() *Task { return k.cur.Load() }

// Closed reports whether Close has been called.
func (k *Kernel) Closed() bool { return k.closed.Load() }

// Driving reports whether a driver call (Run or Advance) is in progress.
func (k *Kernel) Driving() bool { return k.driving }

// TakePanics returns and forgets the panics that escaped tasks.
func (k *Kernel) TakePanics() []*Panic {
	p := k.panics
	k.panics = nil
	return p
}

// Task is one simulated thread of control.
type Task struct {
	k      *Kernel
	id     uint64
	name   string
	num    uint32 // with name, when > 0: "name num" (see Spawn)
	wake   chan Wake
	parent context.Context

	gen      uint64 // bumped whenever the task's pending event changes
	hasEvent bool   // a valid event for this task is in the heap
	blocked  bool
	why      Wake // reason delivered with the pending ready event
	reason   string
	waitCtx  context.Context
	killed   bool

	// The kernel's lists: live tasks (live) and, while it waits on a
	// cancellable context, its cancel group (cgroup, wait) and
	// the order it joined the groups in (cseq). Intrusive, so that a task
	// leaves either list in O(1) however many tasks there are.
	live   node[Task]
	inLive bool
	cgroup *cancelGroup
	wait   node[Task]
	cseq   uint64
	done   atomic.Bool // read by Enter from any goroutine
	// fn is what the task runs, until it first runs; w is its worker,
	// from then on (see resume).
	fn func(ctx context.Context)
	w  *worker
	// runner runs the task (with num), for a task started with Spawn;
	// sctx is the context its function got, ended when the task ends.
	runner Runner
	sctx   *SpawnContext

	// Gate, when set, is released while the task waits at a yielding point
	// (a sleep, an outgoing call) and taken again before it goes on: the
	// input gate of an object turn (rule O3).
	Gate *Gate
	// queued is the gate whose line the task is in (Gate.Acquire, Reserve).
	queued *Gate
	// Data carries the owner's per-task data (for example the object turn).
	Data any
}

// Name returns the task's name, as used in deadlock reports.
func (t *Task) Name() string {
	if t.num == 0 {
		return t.name
	}
	return t.name + " " + strconv.FormatUint(uint64(t.num), 10)
}

// Ctx returns the task's context: the context it was started with, carrying
// the task. A *Task is itself that context.
func (t *Task) Ctx() context.Context { return t }

// Deadline implements context.Context.
func (t *Task) Deadline() (time.Time, bool) { return t.parent.Deadline() }

// Done implements context.Context.
func (t *Task) Done() <-chan struct{} { return t.parent.Done() }

// Err implements context.Context.
func (t *Task) Err() error { return t.parent.Err() }

// Value implements context.Context; it carries the task itself.
func (t *Task) Value(key any) any {
	if key == (taskKey{}) {
		return t
	}
	return t.parent.Value(key)
}

// Kernel returns the kernel the task belongs to.
func (t *Task) Kernel() *Kernel { return t.k }

// Finished reports whether the task has finished.
func (t *Task) Finished() bool { return t.done.Load() }

type taskKey struct{}

// FromContext returns the task carried by ctx, or nil.
func FromContext(ctx context.Context) *Task {
	switch c := ctx.(type) { // the contexts dosim hands out, without Value's calls
	case nil:
		return nil
	case *Task:
		return c
	case *TaskContext:
		return c.task()
	case *SpawnContext:
		return c.task()
	}
	t, _ := ctx.Value(taskKey{}).(*Task)
	return t
}

// Go starts fn as a new task, runnable at the current instant. It may be
// called by the running task, by a callback, or by the driver before Run.
// The task's context is ctx with the task attached. A panic that escapes fn
// ends the task and is kept for TakePanics.
func (k *Kernel) Go(ctx context.Context, name string, fn func(ctx context.Context)) *Task {
	if ctx == nil {
		ctx = context.Background()
	}
	k.nextID++
	t := &Task{k: k, id: k.nextID, name: name, parent: ctx}
	if k.closed.Load() || k.halted.Load() {
		t.done.Store(true)
		return t
	}
	k.alive++
	t.blocked = true
	t.reason = "starting"
	t.fn = fn
	k.ready(t, WokenBySignal)
	return t
}

// Runner runs the tasks started with Spawn: tasks that share one context
// and name and are told apart by a number. Until such a task first runs it
// is only an event (40 bytes, with no pointers) and a share of the
// Runner's slot; it gets a Task when it runs, the Task of a spawned task
// that ended if there is one. 100,000 tasks started together then hold
// little memory, and the collector little to mark, while they wait, and a
// task that runs after one that ended runs on a Task still in the cache
// (issue 14).
type Runner interface {
	// Context returns the context the tasks run with and the name they are
	// reported by ("name num").
	Context() (context.Context, string)
	// Run runs task number num with ctx, a SpawnContext: the Runner's
	// context, carrying the task until it ends.
	Run(ctx context.Context, num uint32)
}

// Preparer is a Runner that can fetch what a task of its will touch into
// the processor's cache ahead of time. When the kernel starts one of its
// tasks, it names the Runner's tasks that come next: the next one (ahead
// 1) and the one after it (ahead 2). The names are hints: new events may
// still come first, and a Preparer must change nothing a run computes.
// 100,000 tasks started together run in seeded order, which is no order
// the hardware can guess, so each task's data is a cache miss unless
// fetched while the task before runs (issue 14).
type Preparer interface {
	Prepare(num uint32, ahead int)
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
	t.Gate, t.queued, t.Data = nil, nil, nil
	t.done.Store(false)
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
		t.sctx = k.newSpawnContext(t)
		r.Run(t.sctx, t.num)
		return true
	}
	fn := t.fn
	t.fn = nil
	fn(t)
	return true
}

// describe names a task with what it runs (its Data, when a Stringer).
func (k *Kernel) describe(t *Task) string {
	if t == nil {
		return "the scheduler (a timer callback)"
	}
	if s, ok := t.Data.(fmt.Stringer); ok {
		return t.Name() + " " + s.String()
	}
	return t.Name()
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
func liveNode(t *Task) *node[Task]                { return &t.live }
func waitNode(t *Task) *node[Task]                { return &t.wait }
func groupNode(g *cancelGroup) *node[cancelGroup] { return &g.link }

// cancelGroup is the blocked tasks that wait on contexts sharing one Done
// channel, in the order they blocked.
type cancelGroup struct {
	done  <-chan struct{}
	tasks list[Task]        // linked through Task.wait
	link  node[cancelGroup] // in the kernel's groups
}

// Block parks the running task t until Ready is called for it, ctx is
// cancelled (if ctx can be), or timeout elapses (timeout < 0: no timer).
// The caller records what it waits on before calling Block so that the
// waker can find it. Once the kernel is closed Block returns WokenByCancel
// at once, or never returns (the goroutine exits) if it was parked.
func (t *Task) Block(ctx context.Context, reason string, timeout time.Duration) Wake {
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
	if ctx != nil && ctx.Done() != nil {
		if ctx.Err() != nil {
			return WokenByCancel
		}
		t.waitCtx = ctx
		k.addCancel(t, ctx.Done())
	}
	t.blocked = true
	t.reason = reason
	if timeout >= 0 {
		at := k.now + timeout
		if timeout >= End-k.now { // never (see End)
			at, t.reason = End, reason+" (until past the end of virtual time)"
		}
		t.gen++
		t.hasEvent = true
		k.keepAlive++
		k.push(event{at: at, kind: evTask, ref: k.hold(t), arg: t.gen, keepAlive: true})
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
	t.blocked = false
	k.dropCancel(t)
	if t.hasEvent {
		k.keepAlive-- // its timer is now stale
	}
	t.gen++
	t.hasEvent = true
	t.why = why
	k.keepAlive++
	k.push(event{at: k.now, kind: evTask, ref: k.hold(t), arg: t.gen, keepAlive: true})
}

// addCancel puts the blocking task t in the cancel group of done.
func (k *Kernel) addCancel(t *Task, done <-chan struct{}) {
	g := k.cancels[done]
	if g == nil {
		if k.cancels == nil {
			k.cancels = map[<-chan struct{}]*cancelGroup{}
		}
		g = &cancelGroup{done: done}
		k.groups.push(g, groupNode)
		k.cancels[done] = g
	}
	k.cancelSeq++
	t.cgroup, t.cseq = g, k.cancelSeq
	g.tasks.push(t, waitNode)
}

func (k *Kernel) dropCancel(t *Task) {
	if t.waitCtx == nil {
		return
	}
	t.waitCtx = nil
	g := t.cgroup
	g.tasks.remove(t, waitNode)
	t.cgroup = nil
	if g.tasks.n == 0 { // the last waiter on this channel: drop the group
		k.groups.remove(g, groupNode)
		delete(k.cancels, g.done)
	}
}

// checkCancels readies blocked tasks whose context was cancelled since the
// last switch. Cancellation happens synchronously in the running task, so
// checking at every switch observes it at a deterministic point. It looks
// at each Done channel once, and readies the cancelled tasks in the order
// they blocked, as a scan of every waiting task in that order would.
func (k *Kernel) checkCancels() {
	fired := k.fired[:0]
	groups := 0
	for g := k.groups.head; g != nil; g = g.link.next {
		select {
		case <-g.done:
			groups++
			for t := g.tasks.head; t != nil; t = t.wait.next {
				fired = append(fired, t)
			}
		default:
		}
	}
	if len(fired) == 0 {
		return
	}
	if groups > 1 {
		slices.SortFunc(fired, func(a, b *Task) int { return cmp.Compare(a.cseq, b.cseq) })
	}
	for _, t := range fired {
		k.ready(t, WokenByCancel) // removes t from its group
	}
	clear(fired)
	k.fired = fired[:0]
}

// callback is a function run on the scheduling goroutine at an instant.
type callback struct {
	fn        func()
	keepAlive bool
	cancelled bool
	fired     bool
}

// Timer cancels a callback scheduled with After.
type Timer struct {
	k  *Kernel
	cb *callback
}

// Stop cancels the callback if it has not run yet and reports whether it did so.
func (tm Timer) Stop() bool {
	if tm.cb == nil || tm.cb.fired || tm.cb.cancelled {
		return false
	}
	tm.cb.cancelled = true
	if tm.cb.keepAlive {
		tm.k.keepAlive--
	}
	return true
}

// After runs fn on the scheduling goroutine when virtual time reaches now+d.
// fn must not block; it may start tasks and ready them. keepAlive says
// whether in-flight work waits for it (link latency: time moves to it on its
// own) or it is background work (an alarm: it runs only when time gets
// there because something else waits longer).
//
// A callback due at or past End never runs (see End); if in-flight work
// waits for it, time moves on towards End meanwhile, and a driver call
// left with nothing else stops with OutOfTime.
func (k *Kernel) After(d time.Duration, keepAlive bool, fn func()) Timer {
	d = max(d, 0)
	cb := &callback{fn: fn, keepAlive: keepAlive}
	at := AddTime(k.now, d)
	if at == End && !keepAlive {
		return Timer{k: k, cb: cb} // never runs, and nothing waits for it
	}
	if keepAlive {
		k.keepAlive++
	}
	k.push(event{at: at, kind: evCallback, ref: k.hold(cb), keepAlive: keepAlive})
	return Timer{k: k, cb: cb}
}

// Background runs fn on the scheduling goroutine when virtual time reaches
// now+d, as After(d, false, fn) does, but draws no seeded tie-break: it
// runs after every other event of its instant (Background callbacks of
// one instant run in the order they were scheduled), and scheduling it
// leaves the seeded sequence (and so every trace) as it was. For housekeeping
// that must not disturb a run, such as evicting an idle object.
func (k *Kernel) Background(d time.Duration, fn func()) Timer {
	d = max(d, 0)
	cb := &callback{fn: fn}
	if d >= End-k.now {
		return Timer{k: k, cb: cb} // never runs (see End)
	}
	k.bgSeq++
	k.pushAt(event{at: k.now + d, kind: evCallback, ref: k.hold(cb), prio: 1<<63 | k.bgSeq})
	return Timer{k: k, cb: cb}
}

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
			cb.fn()
		case evStart:
			run := p.(Runner)
			ctx, name := run.Context()
			t := popLast(&k.spare)
			if t == nil {
				t = &Task{k: k}
			}
			t.id, t.name, t.num, t.parent, t.runner = ev.arg, name, ev.num, ctx, run
			if pr, ok := run.(Preparer); ok {
				k.hint(pr, ev.ref)
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
			return t, why, 0
		}
	}
}

// hint names to pr, whose tasks' events point at slot ref, the tasks of
// its that come next as the heap stands: the root, and the least of the
// root's children. Both are at the top of the heap, in the cache.
func (k *Kernel) hint(pr Preparer, ref uint32) {
	h := k.events
	if len(h) == 0 {
		return
	}
	if h[0].kind == evStart && h[0].ref == ref {
		pr.Prepare(h[0].num, 1)
	}
	m := 0
	for j := 1; j <= arity && j < len(h); j++ {
		if m == 0 || h[j].before(&h[m]) {
			m = j
		}
	}
	if m > 0 && h[m].kind == evStart && h[m].ref == ref {
		pr.Prepare(h[m].num, 2)
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
		name := t.Name()
		if s, ok := t.Data.(fmt.Stringer); ok {
			name += " " + s.String()
		}
		out = append(out, fmt.Sprintf("%s: %s", name, t.reason))
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

// wait waits for the tasks to hand the processor back to the driver. With
// a stall limit it also watches the switch counter on a wall-clock ticker
// and declares a stall when it has not moved for the limit. The wall clock
// only decides when to give up on a hang: a run that does not stall never
// notices the watchdog.
//
// The counter is what makes the driver's reads of the kernel (stall, then
// Close) race-free. The goroutine that hands the processor over bumps it
// last, just before the wake-up it sends (resume), so after everything it
// wrote that the driver reads: the clock, the running task, its worker,
// the live list. The driver declares a stall only when its last load of
// the counter saw the latest bump, and so reads all of that after it.
// (Bumped before resume wrote the task's worker and the live list, as it
// was, the driver read them unordered.) A task's own writes the driver
// reads (Task.Data) are published by Touch.
func (k *Kernel) wait() (Stop, error) {
	limit := k.stallLimit
	if limit <= 0 {
		return <-k.driver, nil
	}
	period := min(max(limit/4, time.Millisecond), time.Second)
	tick := time.NewTicker(period)
	defer tick.Stop()
	last, since, idle := k.switches.Load(), time.Now(), 0
	for {
		select {
		case stop := <-k.driver:
			return stop, nil
		case now := <-tick.C:
			if n := k.switches.Load(); n != last {
				last, since, idle = n, now, 0
				continue
			}
			// Several quiet ticks as well as the time: a process frozen by
			// an overloaded machine wakes to one late tick, not four.
			if idle++; idle < 4 || now.Sub(since) < limit {
				continue
			}
			return Stalled, k.stall(limit)
		}
	}
}

// stall halts the kernel: the running task's goroutine is left to itself
// (it cannot be stopped from outside), everything else stays parked until
// Close ends it.
func (k *Kernel) stall(limit time.Duration) error {
	k.halted.Store(true)
	t := k.cur.Load()
	k.stuck = t
	if t != nil && t.w != nil {
		t.w.done() // Close must not wait for it
	}
	return &Stall{Task: k.describe(t), Now: k.now, Limit: limit}
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
	k.events, k.refs, k.free, k.runner, k.spare = nil, nil, nil, nil, nil
	return nil
}

// push adds e to the heap with a fresh seeded tie-break. The draw loses
// its lowest bit (Background events own the top one): two draws keep
// their order unless they differ in that bit alone (one chance in 2^63),
// and even then the heap's shape orders them, the same in every run.
func (k *Kernel) push(e event) {
	e.prio = k.rng.Uint64() >> 1
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
