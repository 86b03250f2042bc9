package sched

import (
	"context"
	"sync/atomic"
	"time"
)

// Context is the context.Context of one task life, and the only kind of
// context the kernel hands out: what the function of a task started with
// Kernel.Go or Kernel.Spawn runs with, and what the runtime gives a turn it
// runs on its caller's task (Begin, End). It carries the task until that
// life ends, then nothing: a function, or a goroutine it started, that
// keeps it past the end gets ErrNotInTask with it, even once the Task
// serves another life. Its deadline, cancellation and other values are its
// parent's: the context the task was started with, or none (Begin).
type Context struct {
	// t is set once, before the context is handed out: a plain write, as
	// no goroutine can read it yet (an atomic store there cost a
	// BenchmarkCallNoFault call about 8 ns, twice over with End's). It is
	// not to be read once ended: the Task may serve another life.
	t *Task
	// state is nil while the life lasts and nothing interrupted it; End
	// and Interrupt set it, any goroutine reads it. One pointer holds
	// both, so that a Context, and the Task that embeds one, stay small.
	state  atomic.Pointer[ctxState]
	parent context.Context
}

// ctxState is a Context's state once its life ended or was interrupted.
type ctxState struct {
	cause error // Interrupt's, nil if none
	ended bool
}

// endedState is the state of a life that ended uninterrupted: shared, so
// that End allocates nothing.
var endedState = &ctxState{ended: true}

// start makes c carry t, with parent's deadline, cancellation and values.
// It is called once, on a context not yet handed out.
func (c *Context) start(t *Task, parent context.Context) {
	c.t = t
	c.parent = parent
}

// Begin makes c, a context not yet handed out, carry t and nothing else:
// no deadline, no cancellation, no other values. A turn run on its
// caller's task gets such a context, so that nothing of the caller's
// context leaks into the object.
func (c *Context) Begin(t *Task) { c.start(t, context.Background()) }

// End ends the life c belongs to: it carries no task any more. Any
// goroutine may read c meanwhile.
func (c *Context) End() {
	switch st := c.state.Load(); {
	case st == nil:
		c.state.Store(endedState)
	case !st.ended:
		c.state.Store(&ctxState{cause: st.cause, ended: true})
	}
}

// task returns the task c carries, nil once its life has ended.
func (c *Context) task() *Task {
	if st := c.state.Load(); st != nil && st.ended {
		return nil
	}
	return c.t
}

// Deadline implements context.Context: the parent's.
func (c *Context) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done implements context.Context: the parent's.
func (c *Context) Done() <-chan struct{} { return c.parent.Done() }

// Err implements context.Context: the cause Interrupt gave, else the
// parent's.
func (c *Context) Err() error {
	if st := c.state.Load(); st != nil && st.cause != nil {
		return st.cause
	}
	return c.parent.Err()
}

// interrupted reports whether Interrupt was called on c.
func (c *Context) interrupted() bool {
	st := c.state.Load()
	return st != nil && st.cause != nil
}

// Interrupt ends the waits of c's life on c: from now on Err returns
// cause (non-nil), and if c's task is blocked on a wait given c (a sleep,
// a call's reply), it is readied at once as if c had been cancelled, so
// that the wait returns cause. Done is not closed: code that selects on
// it does not see the interruption. A wait on a context derived from c is
// not ended either. It is called from the running task (the runtime's, at
// an object's reset), so that the wake comes at a deterministic point.
func (c *Context) Interrupt(cause error) {
	if st := c.state.Load(); st != nil && st.ended {
		return
	}
	c.state.Store(&ctxState{cause: cause})
	// While c's life lasts, a wait of its task given a Context is a wait
	// on c: a turn run on its caller's task (Begin) has the task to
	// itself until it ends.
	t := c.task()
	if t == nil || !t.blocked || !t.ctxWait {
		return
	}
	t.k.ready(t, WokenByCancel)
}

// Value implements context.Context: the task, while its life lasts, and
// the parent's values.
func (c *Context) Value(key any) any {
	if key == (taskKey{}) {
		if t := c.task(); t != nil {
			return t
		}
		return nil
	}
	return c.parent.Value(key)
}

type taskKey struct{}

// FromContext returns the task carried by ctx, or nil.
func FromContext(ctx context.Context) *Task {
	switch c := ctx.(type) { // the context dosim hands out, without Value's calls
	case nil:
		return nil
	case *Context:
		return c.task()
	}
	t, _ := ctx.Value(taskKey{}).(*Task)
	return t
}

// Context returns the context of the task's life: the one its function
// got, carrying the task and what it was started with.
func (t *Task) Context() context.Context { return t.life }
