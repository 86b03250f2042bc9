package sched

import (
	"context"
	"time"
)

// Sleep parks the running task for d of virtual time (d < 0: 0). It is a
// yielding wait (see Work): what the task's work holds is let go for the
// sleep and taken back after it (an object's input gate, rule O3). It
// returns ctx's error if ctx is cancelled first.
func (t *Task) Sleep(ctx context.Context, d time.Duration) error {
	left := t.Leave()
	w := t.BlockFor(ctx, "sleeping", d)
	t.Return(left)
	if w == WokenOutside {
		return ErrNotInTask
	}
	if t.k.Closed() {
		return ErrClosed
	}
	if w == WokenByCancel && ctx != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// Gate is a FIFO mutex between tasks (the runtime's object input gate).
// Only one task holds it; the others wait in arrival order. A task in
// line is marked (Task.queued), so that asking whether it is in line does
// not scan it.
type Gate struct {
	owner   *Task
	waiters []*Task
}

// Owner returns the task holding the gate, or nil.
func (g *Gate) Owner() *Task { return g.owner }

// Acquire takes the gate for t, the running task, waiting its turn (the
// place Reserve kept for it, if any).
func (g *Gate) Acquire(t *Task, reason string) {
	if g.owner == t {
		return
	}
	if g.owner == nil && len(g.waiters) == 0 {
		g.owner = t
		return
	}
	if t.queued != g { // not already in line (Reserve)
		g.waiters = append(g.waiters, t)
		t.queued = g
	}
	for g.owner != t {
		if t.Block(context.Background(), reason); t.k.Closed() {
			return
		}
	}
}

// Reserve keeps t's place at the gate before t runs: t will hold the gate
// before any task that asks after this call. t must call Acquire when it
// runs.
func (g *Gate) Reserve(t *Task) {
	if g.owner == nil && len(g.waiters) == 0 {
		g.owner = t
		return
	}
	g.waiters = append(g.waiters, t)
	t.queued = g
}

// Release gives the gate to the next waiter, if any.
func (g *Gate) Release() {
	g.owner = nil
	if len(g.waiters) == 0 {
		return
	}
	next := g.waiters[0]
	g.waiters[0] = nil
	g.waiters = g.waiters[1:]
	next.queued = nil
	g.owner = next
	next.k.Ready(next)
}

// Signal is a one-shot event that tasks can wait for: a call's completion.
type Signal struct {
	fired   bool
	one     *Task   // the first waiter (most signals have one)
	waiters []*Task // the others
}

// Fired reports whether Fire has been called.
func (s *Signal) Fired() bool { return s.fired }

// Fire marks the signal and readies every waiter. Later calls do nothing.
func (s *Signal) Fire(k *Kernel) {
	if s.fired {
		return
	}
	s.fired = true
	if s.one != nil {
		k.Ready(s.one)
		s.one = nil
	}
	for _, t := range s.waiters {
		k.Ready(t)
	}
	s.waiters = nil
}

// Wait parks t until the signal fires or ctx is cancelled, and reports
// whether the signal fired. It is a yielding wait (see Work): what t's
// work holds is let go meanwhile.
func (s *Signal) Wait(ctx context.Context, t *Task, reason string) bool {
	return s.wait(ctx, t, reason, noTimer)
}

// WaitFor is Wait that also gives up once timeout (at least 0) of virtual
// time has passed.
func (s *Signal) WaitFor(ctx context.Context, t *Task, reason string, timeout time.Duration) bool {
	return s.wait(ctx, t, reason, max(timeout, 0))
}

// wait is Wait and WaitFor (timeout: noTimer, or the timer's).
func (s *Signal) wait(ctx context.Context, t *Task, reason string, timeout time.Duration) bool {
	if s.fired {
		return true
	}
	left := t.Leave()
	if s.one == nil {
		s.one = t
	} else {
		s.waiters = append(s.waiters, t)
	}
	t.block(ctx, reason, timeout)
	if !s.fired {
		s.remove(t)
	}
	t.Return(left)
	return s.fired
}

func (s *Signal) remove(t *Task) {
	if s.one == t {
		s.one = nil
		return
	}
	for i, w := range s.waiters {
		if w == t {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			return
		}
	}
}

// Free reports whether the gate has no owner and nobody waiting for it.
func (g *Gate) Free() bool { return g.owner == nil && len(g.waiters) == 0 }
