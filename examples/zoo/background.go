package zoo

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// chores calls one method of an examples.Chores object: what the
// liveness checks (rule C8) judge is what its background work leaves.
func chores(method string, args ...any) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("CHORES", examples.NewChores)
		s, err := ns.GetByName("home")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, method, args...)
		return nil
	}
}

var alarmForever = Bug{
	Name: "alarm-forever", Kind: "an alarm that re-arms forever",
	Needs:     "nothing: every run shows it, at the horizon (rule C8)",
	Elsewhere: "examples.Chores WatchForever and Watch; testdata/liveness/alarm-rearms-forever.yaml, alarm-stops.yaml",
	Buggy:     chores("WatchForever"), Fixed: chores("Watch", 3),
	Background: true, FoundBy: FoundByRandom,
}

var poisonedQueue = Bug{
	Name: "poisoned-queue", Kind: "a poisoned queue item that blocks the items behind it",
	Needs:     "nothing: every run shows it, at the horizon (rule C8)",
	Elsewhere: "examples.Chores Poison; testdata/liveness/queue-never-drains.yaml, queue-drains.yaml",
	Buggy:     chores("Poison", true), Fixed: chores("Poison", false),
	Background: true, FoundBy: FoundByRandom,
}

// Sweeper sweeps every hour once it is opened: each sweep schedules the
// next, an hour later (a one-shot schedule, which the Agents SDK does not
// deduplicate unless asked; a recurring one it would). Buggy, Open
// remembers in a field that it started the chain: a restart forgets the
// field, and the next Open starts another, so the sweeps double. Fixed,
// Open remembers it in storage, with the schedule.
type Sweeper struct {
	agent.Agent
	st      *object.State
	fixed   bool
	started bool
}

// Methods lists Open, Sweep (the schedule's callback) and Schedules
// (marked Retryable: a read).
func (s *Sweeper) Methods() object.Methods {
	return object.Methods{"Open": object.Func(s.Open), "Sweep": object.Func(s.Sweep), "Schedules": object.Retryable(s.Schedules)}
}

// Open makes the hourly sweep, once.
func (s *Sweeper) Open(ctx context.Context) error {
	if s.fixed {
		if made, err := s.st.Storage().Get(ctx, "swept-hourly", new(bool)); err != nil || made {
			return err
		}
	} else if s.started {
		return nil
	}
	if _, err := s.Schedule(ctx, agent.After(time.Hour), "Sweep", nil); err != nil {
		return err
	}
	s.started = true
	if s.fixed {
		return s.st.Storage().Put(ctx, "swept-hourly", true)
	}
	return nil
}

// Sweep is one sweep: it counts, and schedules the next.
func (s *Sweeper) Sweep(ctx context.Context) error {
	var n int
	if _, err := s.st.Storage().Get(ctx, "swept", &n); err != nil {
		return err
	}
	if err := s.st.Storage().Put(ctx, "swept", n+1); err != nil {
		return err
	}
	_, err := s.Schedule(ctx, agent.After(time.Hour), "Sweep", nil)
	return err
}

// Schedules returns how many schedules the object holds.
func (s *Sweeper) Schedules(ctx context.Context) (int, error) {
	ts, err := s.ListSchedules(ctx)
	return len(ts), err
}

// openFourTimes opens the sweeper four times, 30 seconds apart (as each
// new session would; within the idle time before an eviction, rule L5),
// and checks that it holds at most one schedule.
func openFourTimes(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("SWEEPER", func(st *object.State) object.Object { return &Sweeper{st: st, fixed: fixed} })
		for range 4 {
			s, err := ns.GetByName("home")
			if err != nil {
				return err
			}
			_, _ = s.Call(ctx, "Open")
			if err := rt.Sleep(ctx, 30*time.Second); err != nil {
				return err
			}
		}
		n, err := readInt(ctx, ns, "home", "Schedules")
		if err == nil && n > 1 {
			return fmt.Errorf("the sweeper holds %d hourly schedules: the schedule was made again after a restart", n)
		}
		return nil
	}
}

var scheduleOnRestart = Bug{
	Name: "schedule-on-restart", Kind: "a schedule that duplicates itself on restart",
	Needs: "one fault: a reset of the object (fail-after-delivery) between two Opens (an eviction, rule L5, would do too)",
	Buggy: openFourTimes(false), Fixed: openFourTimes(true),
	Background: true, FoundBy: FoundByRandom,
}
