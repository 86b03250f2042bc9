package runtime

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/sched"
)

// The errors a run ends with when the simulation itself cannot go on
// (rule H1). They are defined here, their one home: the scheduler below
// reports what happened as plain data (a stop reason, the blocked tasks,
// a sched.Stall, a sched.Panic) and the runtime builds these from it.

// StallError is returned by Run (and Advance) when a task ran for longer
// than the stall limit, in wall-clock time, without reaching a simulation
// blocking point: it blocks on a raw channel, a mutex, a real sleep or a
// goroutine, or loops forever. It names the task and the object turn it
// runs (namespace, object, method). Close still works afterwards; the
// stalled goroutine itself cannot be stopped from outside and stays
// behind if it is blocked forever (it ends as soon as it comes back to the
// simulation). errors.Is(err, ErrStalled) holds.
type StallError struct {
	Task  string        // the task's name, with the object turn it runs ("turn NS/obj.Method attempt 1")
	Now   time.Duration // the virtual instant of the stall
	Limit time.Duration // the wall-clock stall limit that was reached
}

// Error names the task, the likely causes and what to do.
func (e *StallError) Error() string {
	return fmt.Sprintf("dosim: stalled at %v: task %q ran for more than %v of wall-clock time without reaching a simulation "+
		"blocking point; it is probably blocked outside the simulation (a raw channel, a sync.Mutex or WaitGroup, "+
		"time.Sleep, a goroutine it waits for) or loops forever. Inside simulated code use the runtime's Sleep, stubs, "+
		"Group and object.State instead; a goroutine must not call stubs or sleeps (they return ErrNotInTask). "+
		"If the work is honest and slow, raise the stall limit (runtime.WithStallLimit, --stall-limit)",
		e.Now, e.Task, e.Limit)
}

// Is makes errors.Is(err, ErrStalled) hold.
func (e *StallError) Is(target error) bool { return target == ErrStalled }

// ErrDeadlocked is what a *DeadlockError is (errors.Is), and so the error
// of a Run, Advance or Quiesce after one.
var ErrDeadlocked = errors.New("dosim: deadlock")

// DeadlockError is returned by Run when every task is blocked and no timer
// can wake one. It names the blocked tasks and what each waits for.
// errors.Is(err, ErrDeadlocked) holds.
//
// The blocked tasks stay where they are. The platform cancels a request
// whose code hung and its object goes on serving; dosim cannot cancel a
// parked goroutine short of ending it (Close), and the tasks hold what
// they held: an object's input gate, a place in its line, a lane of its
// background work, calls in flight. A later Run would wait for them again
// and report them as its own, so Run, Advance and Quiesce refuse instead,
// with an error that wraps this one: make a new runtime for the next run.
type DeadlockError struct {
	Now     time.Duration
	Blocked []string // "task-name: what it waits for", in start order
}

// Error names the blocked tasks and what each waits for.
func (e *DeadlockError) Error() string {
	return fmt.Sprintf("dosim: deadlock at %v: every task is blocked and no timer is pending: %s",
		e.Now, strings.Join(e.Blocked, "; "))
}

// Is makes errors.Is(err, ErrDeadlocked) hold.
func (e *DeadlockError) Is(target error) bool { return target == ErrDeadlocked }

// ClockError is returned by Run (Advance, Quiesce) when the run cannot go
// on because virtual time cannot move (rule H1), for one of two reasons.
//
// PastEnd: the work left waits for an instant past the end of virtual
// time (see MaxElapsed), which never comes (a sleep, a timeout or a link
// delay near math.MaxInt64, or sleeps that add up past 292 years).
// Pending names the tasks still waiting.
//
// Otherwise the clock stands still: Object's background work (alarm
// deliveries, scheduled and queued task runs) ran Limit times at the
// instant Now without the clock moving, the instant limit
// (WithInstantLimit), because it keeps setting itself up again at the same
// instant (an alarm its handler sets to now, a task that schedules or
// queues itself with no delay). Such work never ends, and nothing reaches
// a horizon or the watchdog.
//
// Like a DeadlockError it leaves work behind: later driver calls return
// an error wrapping it. errors.Is(err, ErrClockStuck) holds for both.
type ClockError struct {
	Now     time.Duration // the virtual instant the run stopped at
	PastEnd bool
	Object  string   // "NAMESPACE/object", when the clock stood still
	Limit   int      // the instant limit reached, when the clock stood still
	Pending []string // the tasks still waiting, as in a DeadlockError
}

// Error says why the clock cannot move and what to do.
func (e *ClockError) Error() string {
	pending := strings.Join(e.Pending, "; ")
	if e.PastEnd {
		return fmt.Sprintf("dosim: virtual time cannot move at %v: the work left waits for an instant past the end of "+
			"virtual time (%v after the start, about 292 years), which never comes: %s. A sleep, timeout or link delay "+
			"that long (a duration near math.MaxInt64, or sleeps that add up past the end) never ends; to wait until "+
			"something happens, wait for that (a call, a Group, a context)", e.Now, MaxElapsed, pending)
	}
	return fmt.Sprintf("dosim: virtual time stands still at %v: %s ran its background work (alarm deliveries, scheduled "+
		"and queued tasks) %d times at this instant and sets it up again at the same instant, so it would run for ever "+
		"without the clock moving: an alarm its handler sets to now or earlier, or a task that schedules or queues itself "+
		"with no delay. Give the next run a delay; if this much work at one instant is meant, raise the limit "+
		"(runtime.WithInstantLimit)%s", e.Now, e.Object, e.Limit, stillWaiting(pending))
}

// stillWaiting is the end of a frozen clock's message: what still waits.
func stillWaiting(pending string) string {
	if pending == "" {
		return ""
	}
	return ". Still waiting: " + pending
}

// Is makes errors.Is(err, ErrClockStuck) hold.
func (e *ClockError) Is(target error) bool { return target == ErrClockStuck }

// PanicError is returned by Run when a task's code panicked outside an
// object method (a panic inside a method is the caller's remote error), or
// when any simulated code called runtime.Goexit (t.FailNow and t.Fatal do):
// then Goexit is set, Value is nil and the task named is the object turn,
// if any.
type PanicError struct {
	Task   string
	Value  any
	Stack  []byte
	Goexit bool
}

// Error names the task and the panic, with its stack.
func (e *PanicError) Error() string {
	if e.Goexit {
		return fmt.Sprintf("dosim: task %q called runtime.Goexit and ended without returning "+
			"(t.FailNow, t.Fatal, require.* or t.SkipNow called from simulated code do this: "+
			"return an error or record the failure instead)", e.Task)
	}
	return fmt.Sprintf("dosim: task %q panicked: %v\n%s", e.Task, e.Value, e.Stack)
}

// driveError is the error of a driver call whose kernel returned err: a
// stall the scheduler reports as a *sched.Stall becomes a *StallError;
// any other error is the kernel's own (closed, stalled before, a target
// past the end).
func driveError(err error) error {
	var s *sched.Stall
	if errors.As(err, &s) {
		return &StallError{Task: s.Task, Now: s.Now, Limit: s.Limit}
	}
	return err
}

// panicError is the error of the first panic the kernel reports.
func panicError(p *sched.Panic) error {
	return &PanicError{Task: p.Task, Value: p.Value, Stack: p.Stack, Goexit: p.Goexit}
}
