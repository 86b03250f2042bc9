package agent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A6: retry options are resolved against the defaults when the task is
// pushed and stored resolved: {maxAttempts: 7} is stored as 7, 100, 3000,
// and a later change of the class's defaults leaves the stored task as
// it was. Expected values: agents@0.32.0 (src/index.ts: schedule() and
// queue() call resolveRetryConfig when the task is pushed).
func TestA6_RetryOptionsAreResolvedWhenPushed(t *testing.T) {
	w := newWorld(t, 1)
	opts := agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(7)}}
	w.inside(func(ctx context.Context, st self) error {
		if _, err := st.Schedule(ctx, agent.After(time.Minute), "Work", "s", opts); err != nil {
			return err
		}
		_, err := st.Queue(ctx, "Work", "q", agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(7)}})
		return err
	})
	// The class changes its defaults afterwards.
	w.defaults = agent.RetryOptions{MaxAttempts: new(2), BaseDelayMs: new(1000), MaxDelayMs: new(9000)}
	var schedules []agent.Task
	w.inside(func(ctx context.Context, st self) error {
		var err error
		schedules, err = st.ListSchedules(ctx)
		return err
	})
	require.Len(t, schedules, 1)
	r := schedules[0].Options.Retry
	require.NotNil(t, r.MaxAttempts)
	require.NotNil(t, r.BaseDelayMs, "stored resolved")
	require.NotNil(t, r.MaxDelayMs, "stored resolved")
	assert.Equal(t, []int{7, 100, 3000}, []int{*r.MaxAttempts, *r.BaseDelayMs, *r.MaxDelayMs})

	w.fails["s"] = 100
	require.NoError(t, w.rt.Advance(time.Hour))
	runs := 0
	for _, l := range w.log {
		if len(l) > 1 && l[:2] == "s@" {
			runs++
		}
	}
	assert.Equal(t, 7, runs, "the stored 7 attempts, not the class's later 2")
	for _, e := range w.rt.Events() {
		if e.Kind == object.EventRetry && e.Callback == "Work" {
			assert.Less(t, e.Delay, 3*time.Second, "the stored cap of 3000 ms, not the later 9000")
		}
	}
}

// job fails the first fails calls with err, then succeeds; it counts them.
type job struct {
	fails int
	err   func(st self) error
	calls int
}

func (j *job) run(ctx context.Context, st self) error {
	j.calls++
	if j.calls <= j.fails {
		return j.err(st)
	}
	return nil
}

// scheduleJob schedules (when) or queues the world's "Crash" callback,
// which runs w.job, and makes j the job.
func scheduleJob(t *testing.T, w *world, j *job, when agent.When, queued bool) {
	t.Helper()
	w.inside(func(ctx context.Context, st self) error {
		o := agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(3)}}
		var err error
		if queued {
			_, err = st.Queue(ctx, "Crash", nil, o)
		} else {
			_, err = st.Schedule(ctx, when, "Crash", nil, o)
		}
		w.job = j.run // what the callback runs, once this turn is over
		return err
	})
}

func deferrals(w *world) int {
	n := 0
	for _, e := range w.rt.Events() {
		if e.Kind == object.EventRetry && e.Note == "deferred: a platform failure" {
			n++
		}
	}
	return n
}

// A6: a failure that looks like the platform's is not handed to OnError:
// once the run's attempts are used up, the task is kept and runs again
// in a fresh invocation (from its first attempt); the callback's own
// error goes to OnError as before. Expected values: the Agents SDK's
// runner and classifier (agents@0.32.0; the agents repo's
// packages/agents/src/retries.ts isPlatformTransientError and the
// scheduler's deferral of a one-shot row, "Deferring scheduled callback
// ... the one-shot row is preserved").
func TestA6_PlatformFailuresAreDeferredNotHandedToOnError(t *testing.T) {
	cases := []struct {
		name     string
		err      func(st self) error
		platform bool
	}{
		{name: "network connection lost", platform: true,
			err: func(self) error {
				return fmt.Errorf("SqlError: SQL query failed: %w", errors.New("Network connection lost."))
			}},
		{name: "a stub's overloaded error", platform: true, err: func(self) error {
			return &stub.Error{Overloaded: true, Msg: "Durable Object is overloaded. Too many requests queued."}
		}},
		{name: "a stub's reset error", platform: true, err: func(self) error {
			return &stub.Error{DurableObjectReset: true, Msg: "object reset (storage): Internal error in Durable Object storage caused object to be reset"}
		}},
		{name: "overloaded in words only", platform: true, err: func(self) error { return errors.New("Durable Object is overloaded. Too many requests queued.") }},
		{name: "the callback's own error", err: func(self) error { return errors.New("bad input") }},
	}
	for _, c := range cases {
		for _, queued := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s queued=%v", c.name, queued), func(t *testing.T) {
				w := newWorld(t, 1)
				j := &job{fails: 3, err: c.err}
				scheduleJob(t, w, j, agent.After(time.Minute), queued)
				require.NoError(t, w.rt.Advance(time.Hour))
				if !c.platform {
					assert.Equal(t, 3, j.calls)
					require.Len(t, w.errs, 1, "the callback's own error goes to OnError")
					assert.Zero(t, deferrals(w))
					return
				}
				assert.Empty(t, w.errs, "a platform failure is not handed to OnError")
				assert.Equal(t, 1, deferrals(w), "deferred once, after its 3 attempts")
				assert.Equal(t, 4, j.calls, "3 attempts, then a fresh invocation that succeeds")
				left := 0
				w.inside(func(ctx context.Context, st self) error {
					s, err := st.ListSchedules(ctx)
					q, qerr := st.ListQueue(ctx)
					left = len(s) + len(q)
					return errors.Join(err, qerr)
				})
				assert.Zero(t, left, "the task ran to success and is gone")
			})
		}
	}
}

// A6: a recurring schedule is not deferred (the SDK defers one-shot rows
// only): its platform failure goes to OnError and it runs at its next
// time.
func TestA6_ARecurringScheduleIsNotDeferred(t *testing.T) {
	w := newWorld(t, 1)
	j := &job{fails: 3, err: func(self) error { return errors.New("Network connection lost.") }}
	scheduleJob(t, w, j, agent.Every(time.Minute), false)
	require.NoError(t, w.rt.Advance(90*time.Second))
	assert.Zero(t, deferrals(w))
	assert.Len(t, w.errs, 1)
}

// A3: a code-update reset and a memory-limit reset stop a task's attempts
// at once (no in-process retry: the SDK's shouldRetry says no to them),
// and the task is deferred to a fresh invocation, not handed to OnError.
// So does the object's own reset under the callback (its storage refuses
// the stale instance). Expected values: agents@0.32.0 (retries.ts
// isDurableObjectCodeUpdateReset, isDurableObjectMemoryLimitReset; the
// runner's tryN shouldRetry).
func TestA3_CodeUpdateAndMemoryLimitResetsStopRetriesEarly(t *testing.T) {
	cases := []struct {
		name string
		err  func(w *world) func(st self) error
	}{
		{name: "code update", err: func(*world) func(self) error {
			return func(self) error {
				return &stub.Error{DurableObjectReset: true, Msg: "object reset (code-update): Durable Object reset because its code was updated."}
			}
		}},
		{name: "script upgraded", err: func(*world) func(self) error {
			return func(self) error {
				return errors.New("This script has been upgraded. Please send a new request to connect to the new version.")
			}
		}},
		{name: "memory limit", err: func(*world) func(self) error {
			return func(self) error {
				return errors.New("Durable Object's isolate exceeded its memory limit and was reset.")
			}
		}},
		{name: "the object reset under the callback", err: func(w *world) func(self) error {
			return func(st self) error {
				if err := w.ns.Reset(st.ID(), transport.ResetCodeUpdate); err != nil {
					return err
				}
				return st.Storage().Put(context.Background(), "k", 1)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, 1)
			j := &job{fails: 1, err: c.err(w)}
			scheduleJob(t, w, j, agent.After(time.Minute), false)
			require.NoError(t, w.rt.Advance(time.Hour))
			assert.Empty(t, w.errs)
			assert.Equal(t, 2, j.calls, "one attempt, stopped early, then the fresh invocation")
			assert.Equal(t, 1, deferrals(w))
			var reasons []string
			for _, e := range w.rt.Events() {
				if e.Kind == object.EventRetryGaveUp {
					reasons = append(reasons, e.Reason)
				}
			}
			assert.Equal(t, []string{"platform-reset"}, reasons)
		})
	}
}
