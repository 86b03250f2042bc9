package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scheduleIDs schedules each of whens in one turn, with payloads and
// options as given, and returns the ids Schedule gave and the number of
// schedules stored after.
func scheduleIDs(t *testing.T, whens []agent.When, payloads []any, opts []agent.TaskOptions) ([]string, int) {
	t.Helper()
	w := newWorld(t, 1)
	var ids []string
	n := 0
	w.inside(func(ctx context.Context, st self) error {
		for i, when := range whens {
			task, err := st.Schedule(ctx, when, "Work", payloads[i], opts[i])
			if err != nil {
				return err
			}
			ids = append(ids, task.ID)
		}
		list, err := st.ListSchedules(ctx)
		n = len(list)
		return err
	})
	return ids, n
}

// A6: a recurring schedule (Cron, Every) is idempotent by default, as the
// Agents SDK's are (agents 0.32.0, Scheduler's insert: "recurring timings
// deduplicate unless idempotent: false opts out"): the same schedule made
// twice is one task, its first id; another expression, interval or
// payload, or Idempotent false on a Cron schedule, makes another.
func TestA6_RecurringSchedulesAreIdempotentByDefault(t *testing.T) {
	none, no := agent.TaskOptions{}, agent.TaskOptions{Idempotent: new(false)}
	cases := []struct {
		name     string
		whens    []agent.When
		payloads []any
		opts     []agent.TaskOptions
		same     bool
	}{
		{"the same interval", []agent.When{agent.Every(time.Minute), agent.Every(time.Minute)}, []any{"p", "p"}, []agent.TaskOptions{none, none}, true},
		{"the same cron", []agent.When{agent.Cron("0 9 * * *"), agent.Cron("0 9 * * *")}, []any{"p", "p"}, []agent.TaskOptions{none, none}, true},
		{"another interval", []agent.When{agent.Every(time.Minute), agent.Every(2 * time.Minute)}, []any{"p", "p"}, []agent.TaskOptions{none, none}, false},
		{"another cron", []agent.When{agent.Cron("0 9 * * *"), agent.Cron("0 10 * * *")}, []any{"p", "p"}, []agent.TaskOptions{none, none}, false},
		{"another payload", []agent.When{agent.Every(time.Minute), agent.Every(time.Minute)}, []any{"p", "q"}, []agent.TaskOptions{none, none}, false},
		{"opted out", []agent.When{agent.Cron("0 9 * * *"), agent.Cron("0 9 * * *")}, []any{"p", "p"}, []agent.TaskOptions{none, no}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ids, n := scheduleIDs(t, c.whens, c.payloads, c.opts)
			require.Len(t, ids, 2)
			if c.same {
				assert.Equal(t, ids[0], ids[1], "the stored schedule is returned")
				assert.Equal(t, 1, n, "one row")
			} else {
				assert.NotEqual(t, ids[0], ids[1])
				assert.Equal(t, 2, n)
			}
		})
	}
}

// A6: a one-shot schedule (After, At) adds a row each time unless it is
// made with Idempotent true; then it matches a stored one-shot of the same
// kind, callback and payload whatever its time, as the SDK's does
// (agents 0.32.0: "one-shot timings deduplicate only when idempotent:
// true is passed"; its match compares no time).
func TestA6_OneShotSchedulesDeduplicateOnlyWhenAsked(t *testing.T) {
	yes, none := agent.TaskOptions{Idempotent: new(true)}, agent.TaskOptions{}
	ids, n := scheduleIDs(t, []agent.When{agent.After(time.Minute), agent.After(time.Minute)}, []any{"p", "p"}, []agent.TaskOptions{none, none})
	assert.NotEqual(t, ids[0], ids[1], "by default, two rows")
	assert.Equal(t, 2, n)

	ids, n = scheduleIDs(t, []agent.When{agent.After(time.Minute), agent.After(time.Hour)}, []any{"p", "p"}, []agent.TaskOptions{none, yes})
	assert.Equal(t, ids[0], ids[1], "idempotent: the stored one, though its delay differs")
	assert.Equal(t, 1, n)

	at := agent.At(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	ids, n = scheduleIDs(t, []agent.When{agent.After(time.Minute), at}, []any{"p", "p"}, []agent.TaskOptions{yes, yes})
	assert.NotEqual(t, ids[0], ids[1], "a delayed and a dated schedule are of other kinds")
	assert.Equal(t, 2, n)
}

// A6: Idempotent is a schedule's option; a queued task refuses it, naming
// it.
func TestA6_AQueuedTaskRefusesIdempotent(t *testing.T) {
	w := newWorld(t, 1)
	var err error
	w.inside(func(ctx context.Context, st self) error {
		_, err = st.Queue(ctx, "Work", "p", agent.TaskOptions{Idempotent: new(true)})
		return nil
	})
	require.ErrorIs(t, err, agent.ErrTask)
	assert.ErrorContains(t, err, "Idempotent applies to schedules only")
}

// A6: an Every schedule is always idempotent, as the SDK's scheduleEvery
// is (it ignores an idempotent: false, real workerd 1.20261117.1 with
// agents 0.32.0, internal/platformtest's schedule-dedupe): Idempotent
// false is refused, naming Cron as the way to add a row per call.
func TestA6_AnEveryScheduleCannotOptOut(t *testing.T) {
	w := newWorld(t, 1)
	var err error
	w.inside(func(ctx context.Context, st self) error {
		_, err = st.Schedule(ctx, agent.Every(time.Minute), "Work", "p", agent.TaskOptions{Idempotent: new(false)})
		return nil
	})
	require.ErrorIs(t, err, agent.ErrTask)
	assert.ErrorContains(t, err, "an Every schedule is always idempotent")
}
