package sched

import (
	"errors"
	"fmt"
	"time"
)

// ErrClosed is returned by blocking calls once the kernel has been closed.
var ErrClosed = errors.New("dosim: runtime closed")

// ErrNotInTask is returned when a blocking call is made outside a simulated task.
var ErrNotInTask = errors.New("dosim: not inside a simulated task (call it from a function run by Runtime.Run or Group.Go)")

// ErrStalled is what a *Stall is (errors.Is): a task held the processor for
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
