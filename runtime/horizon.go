package runtime

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dosim/dosim/agent"
)

// The horizon (rule C8): a bound on virtual time, so that work that never
// ends (a queue that keeps filling itself, an alarm that keeps re-arming)
// ends a run with an error that says what was still going on, instead of
// running on for ever; and the background work after a run, run to a
// horizon, shows what an object leaves behind.

// WithHorizon bounds virtual time at d since the runtime started: when
// work that keeps Run going (a sleep, a call in flight, a queue not yet
// drained) falls due after it, Run stops there and returns a
// *HorizonError naming what was pending. Background events (alarms,
// schedules) past it wait, as they do when Run returns. d <= 0: no bound
// (the default).
func WithHorizon(d time.Duration) Option {
	return optionFunc(func(r *Runtime) {
		if d > 0 {
			r.horizon = d
		}
	})
}

// ErrHorizon is wrapped by *HorizonError.
var ErrHorizon = errors.New("the run did not end by its horizon")

// HorizonError is Run's error when work went on past the horizon
// (WithHorizon, Quiesce): At is the horizon, Pending what was still
// waiting there.
type HorizonError struct {
	At      time.Duration
	Pending []string
}

// Error names the horizon and what was pending.
func (e *HorizonError) Error() string {
	return fmt.Sprintf("dosim: %v: at %v of virtual time work was still pending: %s", ErrHorizon, e.At, strings.Join(e.Pending, "; "))
}

// Unwrap makes errors.Is(err, ErrHorizon) hold.
func (e *HorizonError) Unwrap() error { return ErrHorizon }

// Quiesce runs the background work (alarms, scheduled and queued tasks)
// that falls due in the next d of virtual time, as Advance does, and
// returns a *HorizonError if work that keeps a run going (a queue that
// keeps filling itself) would go on past it. It moves the runtime's
// horizon (WithHorizon) to now + d. When no object has background work
// that can fall due it returns at once, and time does not move. A d that
// would take the clock past MaxElapsed is refused, as Advance refuses it.
func (r *Runtime) Quiesce(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("runtime.Quiesce: d is %v, must be >= 0", d)
	}
	if err := r.usable("runtime.Quiesce"); err != nil {
		return err
	}
	if err := r.pastEnd("runtime.Quiesce", d); err != nil {
		return err
	}
	if !r.BackgroundPending() {
		return nil // nothing can fall due: time need not move
	}
	r.horizon = r.k.Now() + d
	r.k.SetLimit(r.horizon, true)
	return r.drive(r.horizon, nil)
}

// QuiesceUntil is Quiesce(d) in steps of a 24th of d, at most an hour:
// after each step it stops when no background work is pending, or when
// done, given the objects' backlogs, says the rest need not run (the
// explorer stops once what it reports is certain). It returns how long the
// work went on, and the last step's error: a *HorizonError when work that
// keeps a run going was pending at d. A d past MaxElapsed is refused.
func (r *Runtime) QuiesceUntil(d time.Duration, done func([]Backlog) bool) (time.Duration, error) {
	if d < 0 {
		return 0, fmt.Errorf("runtime.QuiesceUntil: d is %v, must be >= 0", d)
	}
	if err := r.pastEnd("runtime.QuiesceUntil", d); err != nil {
		return 0, err
	}
	step := min(d/24, time.Hour)
	if step <= 0 {
		step = d
	}
	start := r.k.Now()
	for ran := time.Duration(0); ; {
		n := min(step, d-ran)
		err := r.Quiesce(n)
		ran += n
		var he *HorizonError
		switch {
		case err != nil && !errors.As(err, &he):
			return r.k.Now() - start, err
		case !r.BackgroundPending():
			return r.k.Now() - start, err
		case ran >= d:
			return d, err
		case done != nil && done(r.Backlogs()):
			return ran, nil
		}
	}
}

// BackgroundPending reports whether any object has an alarm, a schedule
// or queue items that can fall due: what Quiesce would run.
func (r *Runtime) BackgroundPending() bool {
	for _, ns := range r.namespaces {
		for _, h := range ns.order {
			if h.lanes == nil {
				continue
			}
			for i := range h.lanes {
				if ln := &h.lanes[i]; ln.has || ln.armed || ln.running {
					return true
				}
			}
		}
	}
	return false
}

// horizonError is the error of a driver call stopped at the horizon: the
// tasks still waiting, and the objects' queues still holding items.
func (r *Runtime) horizonError() error {
	pending := r.k.Blocked()
	for _, b := range r.Backlogs() {
		if b.Queued > 0 {
			pending = append(pending, fmt.Sprintf("%s/%s: %d item(s) in its queue", b.Namespace, b.Object, b.Queued))
		}
	}
	return &HorizonError{At: r.horizon, Pending: pending}
}

// Backlog is an object's background work at one instant (Backlogs).
type Backlog struct {
	Namespace, Object string
	// Alarm is the object's alarm; AlarmRuns counts its deliveries so far,
	// AlarmFailures those whose handler failed.
	Alarm                    AlarmState
	AlarmRuns, AlarmFailures int
	// Schedules and Queued count the tasks its storage holds.
	Schedules, Queued int
}

// Backlogs returns the background work of every object that used an
// alarm, a schedule or a queue, in the order their hosts were made.
func (r *Runtime) Backlogs() []Backlog {
	var out []Backlog
	for _, ns := range r.namespaces {
		for _, h := range ns.order {
			if h.lanes == nil {
				continue
			}
			s, q := agent.TaskCounts(h.storage)
			out = append(out, Backlog{Namespace: ns.name, Object: h.target.Object, Alarm: h.alarmState(),
				AlarmRuns: h.alarmRuns, AlarmFailures: h.alarmFailures, Schedules: s, Queued: q})
		}
	}
	return out
}
