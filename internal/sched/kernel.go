// Package sched is dosim's deterministic cooperative scheduler and virtual clock.
//
// Every piece of simulated activity (a caller, an attempt, an object turn, a
// backoff sleep) runs as a Task: a goroutine that holds the processor only
// while the Kernel says so. Exactly one task runs at a time. A task gives the
// processor up only at a simulation blocking point (Block and what is built on
// it), and the kernel then picks the next event: the earliest in virtual time,
// ties broken by a draw from the seeded source (or by the tasks' PCT
// priorities, SetPCT, pct.go). Virtual time jumps straight to
// the next event, so a ten-second sleep costs nothing.
//
// Control passes directly from the task that blocks to the task that runs
// next (one channel handoff per switch); the goroutine that called Run or
// Advance (the driver) sleeps until the kernel has nothing more to do.
//
// Time only moves forward while something waits for it: a keep-alive event
// (a sleeping task, in-flight link latency, an Advance target: After).
// Background events (alarms: Alarm, Background) fire when time reaches
// them, but never pull time forward on their own, so Run returns once
// in-flight work has drained.
//
// The kernel knows nothing of objects. What its owner (the runtime) runs on
// a task, an object turn, is a Work the task carries: the kernel names it
// in stall and deadlock reports, and asks it to let go of what it holds
// (the object's input gate) at a yielding wait (Sleep, Signal.Wait).
//
// One kind of context per task life: Context. The function of a task
// started with Go or Spawn runs with one, and a turn the runtime runs on
// its caller's task gets one of its own (Context.Begin); each carries the
// task until that life ends, and is never reused. There used to be three:
// a *Task was itself the context of a task started with Go, a
// SpawnContext that of a spawned task, and a TaskContext that of a turn
// on its caller's task.
//
// The files, by concern: kernel.go (the Kernel, Enter), task.go (Task, Go,
// Spawn, Block, Ready), worker.go (the goroutines that run tasks), work.go
// (Work), context.go (Context), sync.go (Sleep, Gate, Signal), timers.go
// (End, After, Alarm, Background), heap.go (the event heap and the slots
// its events point at), cancel.go (cancel groups), drive.go (Drive, pick,
// Abort, Close), watchdog.go (the stall limit), errors.go (the error
// values and types), list.go (intrusive lists), pct.go (the PCT
// strategy).
package sched

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

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
	started int       // worker goroutines started: the first deepWorkers grow their stacks (deepStack)
	driver  chan Stop
	exitAck chan struct{}
	driving bool
	closed  atomic.Bool // read by Enter from any goroutine
	wg      sync.WaitGroup
	panics  []*Panic

	// The watchdog (see Drive). switches is bumped at every handoff, once
	// the next task is set up, and whenever a task publishes what it runs
	// (SetWork); the driver declares a stall when it has not moved for
	// stallLimit of wall-clock time (see wait for why it is race-free).
	switches   atomic.Uint64
	stallLimit time.Duration
	halted     atomic.Bool // a stall was declared: nothing more runs
	stuck      *Task       // the task that stalled

	epoch time.Time // where the virtual wall clock starts (SetEpoch)

	// refs holds what pending events point at; free lists its unused
	// slots. An event takes a slot when pushed and gives it back when
	// popped; the tasks of one Runner share one slot, the last Runner's
	// (runner, runSlot), so that starting and picking them touches one
	// slot, not 100,000 scattered ones.
	refs    []ref
	free    []uint32
	runner  Runner
	runSlot uint32
	// limit is the instant past which virtual time never moves (SetLimit);
	// 0 when there is none.
	limit    time.Duration
	hasLimit bool
	// aborting: Abort pushed its marker, not yet reached.
	aborting bool
	// steps counts the picks that ran a task (Steps); pct is the PCT
	// strategy's state (SetPCT), nil for the seeded tie-break.
	steps uint64
	pct   *pct
}

// SetEpoch sets the wall-clock instant virtual time starts at (the
// runtime's start, runtime.WithStart); the zero time until then.
func (k *Kernel) SetEpoch(t time.Time) { k.epoch = t }

// Epoch returns the instant SetEpoch set: virtual instant d is
// Epoch().Add(d) on the virtual wall clock.
func (k *Kernel) Epoch() time.Time { return k.epoch }

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
	if t == nil || cur == nil || t.Finished() {
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
