package sched

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrClosed is returned by blocking calls once the kernel has been closed.
var ErrClosed = errors.New("dosim: runtime closed")

// ErrNotInTask is returned when a blocking call is made outside a simulated task.
var ErrNotInTask = errors.New("dosim: not inside a simulated task (call it from a function run by Runtime.Run or Group.Go)")

// ErrStalled is wrapped by a *StallError: a task held the processor for
// longer than the stall limit without reaching a simulation blocking point.
var ErrStalled = errors.New("dosim: a task stalled outside the simulation")

// ErrStallLimit is what the error of a stall limit below MinStallLimit is
// (errors.Is).
var ErrStallLimit = errors.New("dosim: stall limit below the watchdog's floor")

// stallLimitError is CheckStallLimit's error.
type stallLimitError struct{ d time.Duration }

// Error names the limit and what is allowed.
func (e stallLimitError) Error() string {
	return fmt.Sprintf("%v is below the watchdog's floor of %v: want at least %v (such as 10s), or 0 to turn the watchdog off",
		e.d, MinStallLimit, MinStallLimit)
}

// Is makes errors.Is(err, ErrStallLimit) hold.
func (e stallLimitError) Is(target error) bool { return target == ErrStallLimit }

// ErrClockStuck is wrapped by a *ClockError, and by the error of a driver
// call asked to move the clock past End.
var ErrClockStuck = errors.New("dosim: virtual time cannot move")

// ErrDeadlocked is what a *DeadlockError is (errors.Is).
var ErrDeadlocked = errors.New("dosim: deadlock")

// ClockError reports a run that cannot go on because its virtual clock
// cannot move, for one of two reasons.
//
// PastEnd: the work left waits for an instant at or past End, which never
// comes (a sleep, a timeout or a link delay near math.MaxInt64, or sleeps
// that add up past 292 years). Pending names the tasks still waiting.
//
// Otherwise the clock stands still: Object's background work (alarm
// deliveries, scheduled and queued task runs) ran Limit times at the
// instant Now without the clock moving, the instant limit, because it
// keeps setting itself up again at the same instant (an alarm its handler
// sets to now, a task that schedules or queues itself with no delay).
// Such work never ends, and nothing reaches a horizon or the watchdog.
//
// errors.Is(err, ErrClockStuck) holds for both.
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
			"something happens, wait for that (a call, a Group, a context)", e.Now, End-1, pending)
	}
	return fmt.Sprintf("dosim: virtual time stands still at %v: %s ran its background work (alarm deliveries, scheduled "+
		"and queued tasks) %d times at this instant and sets it up again at the same instant, so it would run for ever "+
		"without the clock moving: an alarm its handler sets to now or earlier, or a task that schedules or queues itself "+
		"with no delay. Give the next run a delay; if this much work at one instant is meant, raise the limit "+
		"(runtime.WithInstantLimit)%s", e.Now, e.Object, e.Limit, waiting(pending))
}

// waiting is the end of a frozen clock's message: what still waits.
func waiting(pending string) string {
	if pending == "" {
		return ""
	}
	return ". Still waiting: " + pending
}

// Is makes errors.Is(err, ErrClockStuck) hold.
func (e *ClockError) Is(target error) bool { return target == ErrClockStuck }

// StallError reports that a task held the processor for longer than the
// stall limit, in wall-clock time, without reaching a simulation blocking
// point: it blocks outside the simulation (a raw channel, a mutex, a real
// sleep, a goroutine it waits for) or loops forever. It wraps ErrStalled.
//
// The stalled goroutine cannot be stopped from outside: if it is blocked
// forever (a channel nobody sends on) it stays behind after Close. If it
// wakes up later, it ends at its next blocking point or when its method
// returns, without running anything more of the simulation.
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

// DeadlockError reports that every live task is blocked and no timer can wake one.
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

// PanicError is a panic that escaped a task, or a task that called
// runtime.Goexit (Goexit is set; Value is nil).
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
