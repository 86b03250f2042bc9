package runtime

import (
	"context"
	"time"

	"github.com/dosim/dosim/internal/sched"
)

// WithTimeout is context.WithTimeout in virtual time: the returned context
// is cancelled when the simulation's clock has moved d past now, by a
// scheduler timer, so a sleep or a call waiting on it ends at that virtual
// instant on every run. Its Err is then context.DeadlineExceeded and its
// Deadline the virtual instant (on the runtime's virtual wall clock).
//
// Use it inside simulated code (object methods, Run's function, group
// tasks) instead of context.WithTimeout, which measures wall-clock time:
// the simulation skips through virtual time, so a wall-clock timeout almost
// never fires and, if it does, depends on the machine. A hang outside the
// simulation is ended by the watchdog (WithStallLimit), not by a timeout.
//
// The timer is background work: it fires when time reaches it, but does
// not move time forward on its own. ctx must carry a simulated task;
// otherwise the returned context is already cancelled, with cause
// ErrNotInTask. Call cancel (from simulated code or after Run) to release
// the timer early.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	inner, cancel := context.WithCancelCause(ctx)
	t := sched.FromContext(ctx)
	if t == nil {
		cancel(ErrNotInTask)
		return inner, func() {}
	}
	k := t.Kernel()
	d = max(d, 0)
	vc := &virtualCtx{Context: inner, deadline: k.Epoch().Add(k.Now()).Add(d)}
	timer := k.Alarm(d, func() { cancel(context.DeadlineExceeded) })
	return vc, func() {
		timer.Stop()
		cancel(context.Canceled)
	}
}

// virtualCtx reports a virtual deadline, and DeadlineExceeded once the
// virtual timer has fired.
type virtualCtx struct {
	context.Context
	deadline time.Time // on the virtual wall clock
}

// Deadline implements context.Context: the virtual instant, or the
// parent's if it is earlier.
func (c *virtualCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Err implements context.Context: DeadlineExceeded when the virtual timer
// ended it.
func (c *virtualCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}
