package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
)

// A6: Schedule and Queue check the payload against the callback's
// parameter when they are called, as a run would convert it, and store
// nothing that does not fit: the error names the callback, the parameter's
// type and the payload's. A payload that fits (a number for a map's
// struct, nil for a callback that takes none) is taken.
func TestA6_SchedulePayloadMustFitTheCallback(t *testing.T) {
	w := newWorld(t, 1)
	w.inside(func(ctx context.Context, st self) error {
		for _, tc := range []struct {
			callback string
			payload  any
			want     string
		}{
			{"Work", 42, `callback "Work" takes a string, but the payload is an int: cannot use 42 (a number): want a string`},
			{"Count", "a string", `callback "Count" takes a map[string]int, but the payload is a string: cannot use "a string" (a string): want a mapping of strings to integers`},
			{"NoArg", "x", `callback "NoArg" takes no argument, but the payload is a string`},
			{"Work", nil, `callback "Work" takes a string, but the payload is nil: cannot use null: want a string`},
		} {
			_, err := st.Schedule(ctx, agent.After(time.Minute), tc.callback, tc.payload)
			assert.ErrorIs(t, err, agent.ErrTask, tc.want)
			assert.ErrorIs(t, err, runtime.ErrArguments, tc.want)
			assert.EqualError(t, err, "agent.Agent.Schedule: task: bad arguments: "+tc.want)
			_, err = st.Queue(ctx, tc.callback, tc.payload)
			assert.EqualError(t, err, "agent.Agent.Queue: task: bad arguments: "+tc.want)
		}
		_, err := st.Queue(ctx, "Work", map[string]any{"self": nil})
		assert.ErrorContains(t, err, `callback "Work" takes a string, but the payload is a map[string]interface {}`)
		for _, ok := range []struct {
			callback string
			payload  any
		}{{"NoArg", nil}, {"Work", "p"}, {"Count", map[string]any{"n": 1.0}}} {
			_, err := st.Schedule(ctx, agent.After(time.Hour), ok.callback, ok.payload)
			assert.NoError(t, err, ok.callback)
		}
		list, err := st.ListSchedules(ctx)
		assert.Len(t, list, 3, "only the tasks that fit were stored")
		queue, _ := st.ListQueue(ctx)
		assert.Empty(t, queue)
		return err
	})
	assert.Empty(t, w.errs, "nothing failed later")
}
