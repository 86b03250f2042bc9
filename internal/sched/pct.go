package sched

import (
	"fmt"
	"math/rand/v2"
)

// PCT (Burckhardt et al., ASPLOS'10, "A Randomized Scheduler with
// Probabilistic Guarantees of Finding Bugs") orders the tasks ready at one
// instant by priority instead of a fresh draw per wake-up: each task draws
// a priority from the seed when it is created (Go, Spawn), and whenever it
// becomes ready its event carries that priority, so of the tasks ready at
// an instant the one of highest priority runs first. depth-1 change points
// are drawn uniformly among the first steps steps of the run; at change
// point i the task that runs the step has its priority dropped to i, below
// every initial priority (change point 1 lowest).
//
// A step is one run of a task, from the pick that resumes it to the next
// blocking point: the tasks are cooperative, so a task is never
// preempted, and a dropped priority orders the task's next wake-ups, not
// the step it is in. Virtual time still orders everything else: only
// which of the events due at one instant comes first is the strategy's
// choice. Timer callbacks (link deliveries, timeouts) are not tasks: a
// callback takes the priority of what scheduled it (the running task, or
// the callback running), as the message a task sends travels at its
// sender's priority; one scheduled by neither (the driver) draws its own.
// Without that, a call's delivery would race its sender's peers at a
// fresh draw per tick, and the order of arrivals at an object would be
// the random tie-break's again.
//
// The random tie-break keeps its path (push): the kernel looks at pct only
// where a task's event is pushed and where a step begins.
type pct struct {
	// prio is each task's current priority as an event key (lower runs
	// first): an initial draw below changed, or changed+maxDepth-i after
	// change point i. A map, not a Task field: a Task fits a size class
	// of the allocator (see Task), and only PCT runs pay for it.
	prio map[*Task]uint64
	// points are the change points' steps, by change point (points[i-1]
	// is change point i); 0 for none.
	points [MaxDepth - 1]uint64
	// cb is the priority of the callback running, when inCallback.
	cb         uint64
	inCallback bool
}

// MaxDepth is the largest PCT depth SetPCT accepts.
const MaxDepth = 10

// changed is the key of the highest priority a change point gives: the
// initial draws lie below it (push draws 62 bits under PCT), and
// Background events, whose keys have the top bit set, above.
const changed = 1 << 62

// SetPCT makes the kernel schedule by PCT of depth (1 to MaxDepth) with its
// change points among the first steps steps (at least 1). It draws the
// change points from the seeded source, so call it before anything runs,
// at the same point of every run. depth 1 draws none: each task keeps its
// initial priority.
func (k *Kernel) SetPCT(depth int, steps uint64) error {
	if depth < 1 || depth > MaxDepth {
		return fmt.Errorf("the PCT depth is %d, must be from 1 to %d", depth, MaxDepth)
	}
	if steps < 1 {
		return fmt.Errorf("the PCT steps are %d, must be at least 1", steps)
	}
	p := &pct{prio: map[*Task]uint64{}}
	for i := range depth - 1 {
		p.points[i] = drawPoint(k.rng, steps, p.points[:i])
	}
	k.pct = p
	return nil
}

// drawPoint draws a step from 1 to steps that none of taken is, while
// there is one (else any).
func drawPoint(rng *rand.Rand, steps uint64, taken []uint64) uint64 {
	for tries := 0; ; tries++ {
		s := 1 + rng.Uint64N(steps)
		if tries >= 64 || !contains(taken, s) {
			return s
		}
	}
}

func contains(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ChangePoints returns the steps of the PCT change points, by change point
// (nil under the random tie-break).
func (k *Kernel) ChangePoints() []uint64 {
	if k.pct == nil {
		return nil
	}
	var out []uint64
	for _, s := range k.pct.points {
		if s != 0 {
			out = append(out, s)
		}
	}
	return out
}

// Steps returns how many steps the kernel has run: picks that resumed or
// started a task (see pct). It is PCT's k for a later run of the same
// work (see SetPCT).
func (k *Kernel) Steps() uint64 { return k.steps }

// pushTask pushes e, an event of task t: under PCT with t's priority,
// else with a fresh tie-break (push).
func (k *Kernel) pushTask(t *Task, e event) {
	if k.pct == nil {
		k.push(e)
		return
	}
	p, ok := k.pct.prio[t]
	if !ok {
		p = k.pctDraw()
	}
	e.prio = p
	k.pushAt(e)
}

// pushCallback pushes e, a callback's event: under PCT with the priority
// of what schedules it (see pct), else with a fresh tie-break.
func (k *Kernel) pushCallback(e event) {
	switch {
	case k.pct == nil:
		k.push(e)
	case k.pct.inCallback:
		e.prio = k.pct.cb
		k.pushAt(e)
	default:
		k.pushTask(k.cur.Load(), e)
	}
}

// runCallback runs cb, whose event had priority prio.
func (k *Kernel) runCallback(cb *callback, prio uint64) {
	if k.pct == nil {
		cb.fn()
		return
	}
	k.pct.cb, k.pct.inCallback = prio, true
	cb.fn()
	k.pct.inCallback = false
}

// runFire fires s, as runCallback runs a callback that fires it.
func (k *Kernel) runFire(s *Signal, prio uint64) {
	if k.pct == nil {
		s.Fire(k)
		return
	}
	k.pct.cb, k.pct.inCallback = prio, true
	s.Fire(k)
	k.pct.inCallback = false
}

// pctDraw is push's draw under PCT: an initial priority, below changed.
func (k *Kernel) pctDraw() uint64 { return k.rng.Uint64() >> 2 }

// step begins step number step, run by t whose initial priority (for a
// task not seen before) is key: at a change point t drops to its
// priority.
func (p *pct) step(t *Task, step uint64, key uint64, fresh bool) {
	if fresh {
		p.prio[t] = key
	}
	for i, s := range p.points {
		if s == step {
			p.prio[t] = changed + uint64(MaxDepth-1-i) // change point i+1
		}
	}
}

// forget drops t's priority once it has finished.
func (p *pct) forget(t *Task) { delete(p.prio, t) }
