package explore

import (
	"errors"
	"fmt"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
)

// Liveness (rule C8): after the scenario's steps or the explored function
// end, the explorer lets the objects' background work go on to a horizon
// of virtual time and reports what never settles: a queue that never
// drains, an alarm that keeps re-arming (or is retried for ever), schedule
// rows that keep growing, and a run that does not end by the horizon.

// DefaultHorizon is how long, in virtual time, a run may take and the
// background work may go on after it, unless Options.Horizon says.
const DefaultHorizon = 24 * time.Hour

// KindLiveness is the kind of a liveness violation (rule C8).
const KindLiveness = "liveness"

// Liveness thresholds: how much background work after a run, to the
// horizon, is work that does not settle.
const (
	// rearmsForever is how many deliveries after the run, with the alarm
	// still set at the horizon, make an alarm that re-arms for ever: more
	// than one an hour over the default horizon.
	rearmsForever = 24
	// growsForever is how many schedule rows more at the horizon than at
	// the end of the run make rows that grow without bound.
	growsForever = 10
)

// horizon is the horizon in force: the option, the scenario's, or the
// default; 0 when liveness is off (a negative option).
func horizon(opt time.Duration, sc *scenario.Scenario) time.Duration {
	switch {
	case opt < 0:
		return 0
	case opt > 0:
		return opt
	case sc != nil && sc.Explore.Horizon > 0:
		return sc.Explore.Horizon
	}
	return DefaultHorizon
}

// liveness checks what the background work left after it went on for ran
// of the horizon h: a queue that still holds items is reported only at the
// horizon (it may yet drain), the rest as soon as its count is reached.
func liveness(seed uint64, h, ran time.Duration, end, after []runtime.Backlog, err error, recurringOK bool) []Violation {
	var out []Violation
	bad := func(obj, format string, args ...any) {
		out = append(out, Violation{Seed: seed, Kind: KindLiveness, Object: obj, Message: fmt.Sprintf(format, args...)})
	}
	var he *runtime.HorizonError
	if errors.As(err, &he) {
		bad("", "background work was still going on %v after the run (the horizon): %s", h, pendingText(he.Pending))
	}
	for _, a := range after {
		obj := a.Namespace + "/" + a.Object
		var e runtime.Backlog
		for _, b := range end {
			if b.Namespace == a.Namespace && b.Object == a.Object {
				e = b
			}
		}
		runs, fails := a.AlarmRuns-e.AlarmRuns, a.AlarmFailures-e.AlarmFailures
		switch {
		case a.Queued > 0 && ran >= h:
			bad(obj, "a queue that never drains: %s still queued %v after the run", plural(a.Queued, "item"), h)
		case fails >= rearmsForever:
			bad(obj, "an alarm retried for ever: its handler failed %d of %d deliveries in the %v after the run", fails, runs, ran)
		case a.Alarm.Set && runs >= rearmsForever && !recurringOK:
			bad(obj, "an alarm that keeps re-arming: delivered %d times in the %v after the run, and set again (explore.recurring-alarms: true if it is a heartbeat)", runs, ran)
		}
		if grew := a.Schedules - e.Schedules; grew >= growsForever {
			bad(obj, "schedule rows that grow without bound: %d when the run ended, %d after %v", e.Schedules, a.Schedules, ran)
		}
	}
	return out
}

// certain says whether liveness already has a violation to report, before
// the horizon: the background work need not go on (scenario.Settled).
func certain(recurringOK bool) func(end, now []runtime.Backlog) bool {
	return func(end, now []runtime.Backlog) bool {
		return len(liveness(0, 1, 0, end, now, nil, recurringOK)) > 0
	}
}

// pendingText shortens a horizon error's list of pending work.
func pendingText(p []string) string {
	const most = 3
	if len(p) == 0 {
		return "nothing named"
	}
	s := ""
	for i, x := range p {
		if i == most {
			return s + fmt.Sprintf(" and %d more", len(p)-most)
		}
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}

// horizonViolation is a run that did not end by its horizon, as a
// liveness violation; ok is false for any other error.
func horizonViolation(seed uint64, err error) (Violation, bool) {
	var he *runtime.HorizonError
	if !errors.As(err, &he) {
		return Violation{}, false
	}
	return Violation{Seed: seed, Kind: KindLiveness, Message: fmt.Sprintf("the run did not end by its horizon, %v of virtual time: %s", he.At, pendingText(he.Pending))}, true
}

// recurringOK says whether alarms that re-arm for ever are intended: the
// option, or the scenario's explore.recurring-alarms.
func (e *Explorer) recurringOK() bool { return e.opts.RecurringAlarms || e.sc.Explore.RecurringAlarms }
