package agent_test

import (
	"context"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
)

var scheduleID = regexp.MustCompile(`^s[1-9][0-9]*$`)

// FuzzScheduleSpec (rule A6): no schedule spec (After, At, Cron or Every
// with any delay, instant, expression and callback name) makes
// State.Schedule panic; it refuses a bad spec with an ErrTask or
// ErrNoMethod error and stores nothing, and stores a good one, listed,
// due no earlier than now (At: at its instant).
func FuzzScheduleSpec(f *testing.F) {
	for _, s := range []struct {
		kind     uint8
		d, sec   int64
		expr, cb string
	}{
		{0, int64(time.Second), 0, "", "Work"},
		{0, -1, 0, "", "Work"},
		{0, math.MaxInt64, 0, "", "Work"},
		{1, 0, 0, "", "Work"},
		{1, 0, -62135596800, "", "Work"}, // the zero time
		{1, 0, math.MaxInt64, "", "Work"},
		{1, 0, math.MinInt64, "", "Work"},
		{1, 0, 253402300800, "", "Work"}, // year 10000
		{2, 0, 0, "*/5 * * * *", "Work"},
		{2, 0, 0, "TZ=UTC", "Work"},
		{2, 0, 0, "CRON_TZ=", "Work"},
		{2, 0, 0, "CRON_TZ=UTC 0 9 * * *", "Work"},
		{2, 0, 0, "@every -5s", "Work"},
		{2, 0, 0, "0 0 30 2 *", "Work"},
		{2, 0, 0, "", "Work"},
		{2, 0, 0, "ünïcödé", "Work"},
		{3, 0, 0, "", "Work"},
		{3, math.MinInt64, 0, "", "Work"},
		{3, math.MaxInt64, 0, "", "Work"},
		{4, 0, 0, "", "Work"},
		{0, 0, 0, "", ""},
		{0, 0, 0, "", "Nope"},
		{0, 0, 0, "", "ünïcödé"},
	} {
		f.Add(s.kind, s.d, s.sec, s.expr, s.cb)
	}
	f.Fuzz(func(t *testing.T, kind uint8, d, sec int64, expr, callback string) {
		w := newWorld(t, 1)
		// The checks run inside an object turn, off the test's goroutine:
		// they use Errorf and return, never Fatalf.
		w.inside(func(ctx context.Context, st self) error {
			now := st.Now()
			var when agent.When
			at := time.Unix(sec, 0).UTC()
			switch kind % 5 {
			case 0:
				when = agent.After(time.Duration(d))
			case 1:
				if sec == -62135596800 {
					at = time.Time{}
				}
				when = agent.At(at)
			case 2:
				when = agent.Cron(expr)
			case 3:
				when = agent.Every(time.Duration(d))
			}
			task, err := st.Schedule(ctx, when, callback, "p")
			list, lerr := st.ListSchedules(ctx)
			if lerr != nil {
				t.Errorf("ListSchedules: %v", lerr)
				return nil
			}
			if err != nil {
				if !errors.Is(err, agent.ErrTask) && !errors.Is(err, object.ErrNoMethod) {
					t.Errorf("Schedule(kind %d, %d, %s, %q, %q): error is neither ErrTask nor ErrNoMethod: %v", kind%5, d, at, expr, callback, err)
					return nil
				}
				if strings.Contains(err.Error(), "panic") {
					t.Errorf("Schedule(%q): %v", expr, err)
					return nil
				}
				if len(list) != 0 {
					t.Errorf("a refused schedule was stored: %v", list)
					return nil
				}
				return nil
			}
			if !scheduleID.MatchString(task.ID) || task.Callback != callback {
				t.Errorf("Schedule made task %+v", task)
				return nil
			}
			if kind%5 == 1 && !task.Time.Equal(at) {
				t.Errorf("At(%s) is due at %s", at, task.Time)
				return nil
			}
			if kind%5 != 1 && task.Time.Before(now) {
				t.Errorf("a task due at %s, before now %s", task.Time, now)
				return nil
			}
			if !slices.ContainsFunc(list, func(l agent.Task) bool { return l.ID == task.ID && l.Time.Equal(task.Time) }) {
				t.Errorf("task %+v is not listed: %+v", task, list)
				return nil
			}
			return nil
		})
	})
}
