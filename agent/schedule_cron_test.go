package agent_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/agent"

	"github.com/stretchr/testify/assert"
)

// A6: a time zone with no schedule after it ("TZ=UTC", "CRON_TZ=") made
// robfig/cron's parser panic, and the caller got "object error: panic:
// slice bounds out of range". It is a bad expression like any other: an
// ErrTask error naming it and saying what is allowed, and nothing stored.
func TestA6_CronRejectsBareTimezone(t *testing.T) {
	w := newWorld(t, 1)
	w.inside(func(ctx context.Context, st self) error {
		for _, expr := range []string{"TZ=UTC", "CRON_TZ=", "CRON_TZ=UTC", "TZ=", "TZ=UTC\t*/5\t*\t*\t*\t*"} {
			_, err := st.Schedule(ctx, agent.Cron(expr), "Work", "p")
			if assert.Error(t, err, expr) {
				assert.ErrorIs(t, err, agent.ErrTask, expr)
				assert.NotContains(t, err.Error(), "panic", expr)
				assert.Contains(t, err.Error(), `cron expression "`, expr)
				assert.Contains(t, err.Error(), `allowed are five fields (minute hour day-of-month month day-of-week) or a descriptor such as "@hourly"`, expr)
			}
		}
		_, err := st.Schedule(ctx, agent.Cron("TZ=UTC"), "Work", "p")
		assert.EqualError(t, err, `agent.Agent.Schedule: task: cron expression "TZ=UTC": a time zone with no schedule after it; `+
			`allowed are five fields (minute hour day-of-month month day-of-week) or a descriptor such as "@hourly", `+
			`optionally after a time zone and a space, as in "CRON_TZ=UTC 0 9 * * *"`)
		list, err := st.ListSchedules(ctx)
		assert.Empty(t, list, "nothing was stored")
		if err != nil {
			return err
		}
		// A time zone followed by the fields is still accepted.
		_, err = st.Schedule(ctx, agent.Cron("CRON_TZ=UTC */5 * * * *"), "Work", "p")
		assert.NoError(t, err)
		return nil
	})
}
