// Package wire holds what dosim's public packages share without importing
// each other: the hooks through which package runtime builds values of
// package object and package stub, and the interfaces those values use to
// reach back into the runtime.
package wire

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/dosim/dosim/internal/sched"
)

// Host is what an object's State needs from the runtime hosting it.
type Host interface {
	// Sleep waits d of virtual time, yielding the object's input gate.
	Sleep(ctx context.Context, d time.Duration) error
	// Now is the virtual wall clock.
	Now() time.Time
	// Effect records a side effect that leaves the object.
	Effect(ctx context.Context, kind string, payload any) error

	// Rand is the runtime's seeded source; use it only on the simulated path.
	Rand() *rand.Rand
	// Instance returns the object instance, building it if needed; nil
	// while its constructor runs.
	Instance() (any, error)
	// CheckTask reports an error if the built instance has no method
	// called name, or if payload does not fit its parameter as Invoke would
	// pass it (nil while the instance is not built).
	CheckTask(name string, payload any) error
	// Invoke runs the instance's method called name, building the instance
	// if needed, with payload as its one argument (none when payload is nil
	// and the method takes none), through the path requests take: argument
	// conversion, and a panic returned as an error.
	Invoke(ctx context.Context, name string, payload any) error
	// SetAlarm sets the object's alarm to at, or deletes it when ok is false.
	SetAlarm(at time.Time, ok bool)
	// Alarm returns the pending alarm, if any.
	Alarm() (time.Time, bool)
	// TasksDue tells the host when the earliest task of lane falls due
	// (ok false: the lane is empty), so that it can set its timer.
	TasksDue(lane Lane, at time.Time, ok bool)
	// Event appends an event to the runtime's trace, attributed to the
	// object.
	Event(e Event)
	// Shared returns the runtime-wide value stored under key, storing mk()
	// there first if there is none and mk is not nil.
	Shared(key string, mk func() any) any
	// ResetAfterBlock resets the object because the function given to
	// BlockConcurrencyWhile failed with err (rule L6).
	ResetAfterBlock(err error)
}

// Lane is one of an object's background timers. Each lane runs its work
// one turn at a time, through the object's input gate.
type Lane uint8

// The lanes of an object.
const (
	LaneAlarm    Lane = iota // the user's alarm (rule O6)
	LaneSchedule             // scheduled tasks (rule A6)
	LaneQueue                // queued tasks (rule A6)
	Lanes                    // how many lanes there are
)

// Turn is implemented by the Data of a task that runs an object turn (a
// request, an alarm, a scheduled or queued task).
type Turn interface {
	// TurnState returns the *object.State of the object the turn runs in
	// (real signature: TurnState() *object.State).
	TurnState() any
}

// CallReplayer is implemented by the Work of a task that runs an object
// turn: a call the turn makes through a stub of another runtime while the
// turn is replayed alone (runtime.Replay) is answered from the turn's
// history instead of being sent. ok is false when the turn is not being
// replayed.
type CallReplayer interface {
	ReplayCall(namespace, object, method string, args []any) (v any, err error, ok bool)
}

// StateFrom returns the *object.State of the object whose turn runs on
// ctx's task, or nil outside an object turn (real signature:
// func(ctx context.Context) *object.State).
func StateFrom(ctx context.Context) any {
	t := sched.FromContext(ctx)
	if t == nil {
		return nil
	}
	if tu, ok := t.Work().(Turn); ok {
		return tu.TurnState()
	}
	return nil
}

// The hooks package object sets in its init, by type. Each names, in a
// comment, its real signature: wire sits below package object, so it
// cannot spell object.ID or *object.State, and the values travel as any.
// Package runtime asserts a result to the type written here, once, where it
// calls the hook.
type (
	// NewIDFunc is func(namespace string, raw [32]byte, name string) object.ID.
	NewIDFunc func(namespace string, raw [32]byte, name string) any
	// NewStateFunc is func(id object.ID, storage *object.Storage, host Host) *object.State.
	NewStateFunc func(id any, storage any, host Host) any
	// RunLaneFunc is func(ctx context.Context, state *object.State, lane Lane).
	RunLaneFunc func(ctx context.Context, state any, lane Lane)
	// RenewStateFunc is func(state *object.State, why string) *object.State.
	RenewStateFunc func(state any, why string) any
)

// Hooks set by package object's init.
var (
	// NewID builds an object.ID (see NewIDFunc).
	NewID NewIDFunc
	// NewState builds an *object.State (see NewStateFunc).
	NewState NewStateFunc
	// RunLane runs the due tasks of lane (LaneSchedule or LaneQueue) of the
	// object whose *object.State is state, then reports the lane's next due
	// time through Host.TasksDue. It runs in a turn holding the input gate
	// (see RunLaneFunc).
	RunLane RunLaneFunc
	// RenewState marks state stale, why being the reason (its instance was
	// reset or evicted: its storage refuses every operation from now on,
	// rule L4) and returns a new State for the next instance, with the
	// same id, storage and host (see RenewStateFunc).
	RenewState RenewStateFunc
	// CloseStorage frees what an *object.Storage holds outside the Go
	// heap (its SQL database); the runtime calls it when it closes.
	CloseStorage func(storage any)
)

// Event is what object code tells the host about an event of the trace:
// its kind (one of the object.Event* constants) and typed fields, each set
// only by the kinds it belongs to. runtime.Event carries the same fields,
// with its time and object, and writes them as text.
type Event struct {
	Kind string
	// The task the event is about (all three set, or none).
	Task, TaskKind, Callback string
	Lane                     string        // a task lane whose object could not be built
	Key                      string        // a storage key that could not be read
	Name                     string        // a circuit breaker's name
	State                    string        // a circuit breaker's new state
	Note                     string        // one word: cancelled, removed, dead-letter, index, or why a breaker refused
	Dead                     string        // a dead letter's id
	Attempt                  int           // the attempt, from 1
	Attempts                 int           // attempts made in a task's run
	Retry                    int           // an alarm's retry count
	Reason                   string        // why a retry gave up
	Delay                    time.Duration // until the next try
	Next                     time.Time     // when a repeating task runs next
	Err                      string        // the error
	Panic                    string        // what OnError panicked with
}

// GateHolder is implemented by the Work of a task that runs an object
// turn (sched.Work): HoldGate runs fn with the turn's input gate kept
// closed.
type GateHolder interface {
	HoldGate(fn func() error) error
}

// HoldGate runs fn with the input gate of the turn on ctx's task kept
// closed: a sleep or an awaited call inside fn does not open it (rule L6,
// BlockConcurrencyWhile and Transaction). Outside a turn it just runs fn.
func HoldGate(ctx context.Context, fn func() error) error {
	if t := sched.FromContext(ctx); t != nil {
		if g, ok := t.Work().(GateHolder); ok {
			return g.HoldGate(fn)
		}
	}
	return fn()
}

// Journal is what the runtime drives of an object's storage when a write
// can fail (rule L7): the writes made and not yet confirmed durable.
// Package object's journal implements it.
type Journal interface {
	// Pending reports how many writes wait for confirmation and whether
	// any of them holds the turn's output (was not made with
	// AllowUnconfirmed).
	Pending() (n int, held bool)
	// Confirm makes every pending write durable.
	Confirm()
	// Lose rolls every pending write back, newest first, and returns who
	// made each (what the current hook returned as it was made).
	Lose() []any
}

// Storage journal hooks, set by package object's init.
var (
	// StartJournal makes storage keep a journal of its unconfirmed writes
	// and returns it; current names the turn making a write (nil: outside
	// any turn, durable at once), sync is Storage.Sync's wait and lost
	// makes the pending writes fail when SQLite itself undid them (a
	// statement's ON CONFLICT ROLLBACK) (real signature: func(storage
	// *object.Storage, current func() any, sync func(ctx context.Context)
	// error, lost func()) Journal).
	StartJournal func(storage any, current func() any, sync func(ctx context.Context) error, lost func()) Journal
	// JournalOf returns storage's journal, nil when it keeps none (real
	// signature: func(storage *object.Storage) Journal).
	JournalOf func(storage any) Journal
)
