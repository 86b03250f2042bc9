package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A6: each kind of schedule runs its callback, with the payload, when
// virtual time reaches it; a one-shot schedule is then removed and a
// recurring one scheduled again.
func TestScheduleKindsA6(t *testing.T) {
	cases := []struct {
		name    string
		when    func(now time.Time) agent.When
		advance time.Duration
		runs    []string
		left    int // schedules still listed afterwards
	}{
		{name: "after a delay", when: func(time.Time) agent.When { return agent.After(90 * time.Second) }, advance: time.Hour, runs: []string{"p@1m30s"}},
		{name: "at a time", when: func(now time.Time) agent.When { return agent.At(now.Add(2 * time.Hour)) }, advance: 3 * time.Hour, runs: []string{"p@2h0m0s"}},
		{name: "at a time already past", when: func(now time.Time) agent.When { return agent.At(now.Add(-time.Hour)) }, advance: 0, runs: []string{"p@0s"}},
		{name: "on a cron expression", when: func(time.Time) agent.When { return agent.Cron("*/5 * * * *") }, advance: 16 * time.Minute, runs: []string{"p@5m0s", "p@10m0s", "p@15m0s"}, left: 1},
		{name: "on a cron descriptor", when: func(time.Time) agent.When { return agent.Cron("@hourly") }, advance: 2 * time.Hour, runs: []string{"p@1h0m0s", "p@2h0m0s"}, left: 1},
		{name: "every interval", when: func(time.Time) agent.When { return agent.Every(30 * time.Second) }, advance: 100 * time.Second, runs: []string{"p@30s", "p@1m0s", "p@1m30s"}, left: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, 1)
			var task agent.Task
			w.inside(func(ctx context.Context, st self) error {
				var err error
				task, err = st.Schedule(ctx, c.when(st.Now()), "Work", "p")
				return err
			})
			assert.Regexp(t, `^s\d+$`, task.ID)
			require.NoError(t, w.rt.Advance(c.advance))
			assert.Equal(t, c.runs, w.log)
			var left []agent.Task
			w.inside(func(ctx context.Context, st self) error {
				var err error
				left, err = st.ListSchedules(ctx)
				return err
			})
			assert.Len(t, left, c.left)
			assert.Len(t, w.events(object.EventTaskRun), len(c.runs), "a trace event per run")
		})
	}
}

// A6: listing and cancelling schedules.
func TestScheduleListAndCancelA6(t *testing.T) {
	w := newWorld(t, 1)
	var ids []string
	w.inside(func(ctx context.Context, st self) error {
		for _, d := range []time.Duration{3 * time.Hour, time.Hour, 2 * time.Hour} {
			task, err := st.Schedule(ctx, agent.After(d), "Work", d.String(), agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(5)}})
			if err != nil {
				return err
			}
			ids = append(ids, task.ID)
		}
		list, err := st.ListSchedules(ctx)
		require.NoError(t, err)
		var got []string
		for _, s := range list {
			got = append(got, fmt.Sprintf("%s %s %v %s", s.ID, s.Kind, s.Payload, s.Time.Sub(runtime.Epoch)))
			assert.Equal(t, 5, *s.Options.Retry.MaxAttempts, "options are stored with the task")
		}
		assert.Equal(t, []string{"s2 delayed 1h0m0s 1h0m0s", "s3 delayed 2h0m0s 2h0m0s", "s1 delayed 3h0m0s 3h0m0s"}, got, "earliest first")
		found, err := st.CancelSchedule(ctx, ids[1])
		assert.True(t, found)
		assert.NoError(t, err)
		found, err = st.CancelSchedule(ctx, ids[1])
		assert.False(t, found, "already gone")
		assert.NoError(t, err)
		_, err = st.CancelSchedule(ctx, "q1")
		assert.ErrorIs(t, err, agent.ErrTask)
		assert.EqualError(t, err, `agent.Agent.CancelSchedule("q1"): task: not a schedule id (schedule ids look like s12)`)
		return nil
	})
	require.NoError(t, w.rt.Advance(5*time.Hour))
	assert.Equal(t, []string{"2h0m0s@2h0m0s", "3h0m0s@3h0m0s"}, w.log, "the cancelled one never ran")
}

// A6: a failing callback is retried with Retry's backoff; after the last
// failed attempt OnError gets the error; a one-shot schedule is removed,
// a recurring one scheduled again.
func TestScheduleErrorsGoToOnErrorA6(t *testing.T) {
	w := newWorld(t, 7)
	w.fails["once"] = 9
	w.fails["every"] = 2 // fails its first run's two attempts, then works
	w.inside(func(ctx context.Context, st self) error {
		if _, err := st.Schedule(ctx, agent.After(time.Minute), "Work", "once"); err != nil {
			return err
		}
		_, err := st.Schedule(ctx, agent.Every(time.Hour), "Work", "every", agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(2)}})
		return err
	})
	require.NoError(t, w.rt.Advance(150*time.Minute))
	require.Len(t, w.errs, 2)
	var te *agent.TaskError
	require.ErrorAs(t, w.errs[0], &te)
	assert.Equal(t, "once", te.Task.Payload)
	assert.Equal(t, agent.TaskDelayed, te.Task.Kind)
	assert.Equal(t, 3, te.Attempts, "the default three attempts")
	assert.EqualError(t, te.Err, "once failed", "the last error")
	assert.Regexp(t, `^task s1 \(delayed Work\): 3 attempt\(s\) failed, the last with: once failed$`, te.Error())
	require.ErrorAs(t, w.errs[1], &te)
	assert.Equal(t, 2, te.Attempts)
	var runs []string
	for _, l := range w.log {
		runs = append(runs, strings.Split(l, "@")[0])
	}
	assert.Equal(t, []string{"once", "once", "once", "every", "every", "every"}, runs,
		"once: 3 attempts, then removed; every: a failed run of 2 attempts at 1h, rescheduled, a good run at 2h")
	var left []agent.Task
	w.inside(func(ctx context.Context, st self) error {
		var err error
		left, err = st.ListSchedules(ctx)
		return err
	})
	require.Len(t, left, 1)
	assert.Equal(t, "every", left[0].Payload, "the interval schedule is still there")
	assert.Len(t, w.events(object.EventTaskError), 2)
}

// A6: tasks, their payloads and their options live in storage and survive
// an object reset; the host's timers bring them back, and the object is
// built again to run them.
func TestSchedulesAndQueueSurviveResetA6(t *testing.T) {
	w := newWorld(t, 1)
	w.fails["first"] = 1
	builds := w.builds
	// The turn that makes the tasks ends in a reset, before any can run.
	w.crash("a", func(ctx context.Context, st self) error {
		if _, err := st.Schedule(ctx, agent.After(time.Minute), "Work", "later", agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(4)}}); err != nil {
			return err
		}
		if _, err := st.Schedule(ctx, agent.Every(40*time.Second), "Work", "tick"); err != nil {
			return err
		}
		for _, p := range []string{"first", "second"} {
			if _, err := st.Queue(ctx, "Work", p, agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(2)}}); err != nil {
				return err
			}
		}
		return nil
	})
	assert.Equal(t, []string{"first", "first", "second"}, payloads(w.log), "the queue ran after the reset")
	assert.Equal(t, builds+2, w.builds, "built for the turn, and again after the reset")
	var schedules []agent.Task
	w.crash("a", func(ctx context.Context, st self) error {
		var err error
		schedules, err = st.ListSchedules(ctx)
		return err
	})
	require.Len(t, schedules, 2)
	assert.Equal(t, "later", schedules[1].Payload)
	assert.Equal(t, 4, *schedules[1].Options.Retry.MaxAttempts, "retry options survive the reset")
	w.log = nil
	require.NoError(t, w.rt.Advance(90*time.Second))
	assert.Equal(t, []string{"tick@40s", "later@1m0s", "tick@1m20s"}, w.log, "scheduled work survived two resets")
	assert.Equal(t, builds+3, w.builds, "built again to run the schedules after the second reset")
}

// A6 bad input: each refusal, with its message.
func TestScheduleBadInputA6(t *testing.T) {
	w := newWorld(t, 1)
	w.inside(func(ctx context.Context, st self) error {
		cases := []struct {
			name string
			err  error
			msg  string
		}{}
		add := func(name string, err error, msg string) {
			cases = append(cases, struct {
				name string
				err  error
				msg  string
			}{name, err, msg})
		}
		_, err := st.Schedule(ctx, agent.When{}, "Work", "p")
		add("no when", err, "agent.Agent.Schedule: task: when is not set (use agent.After, At, Cron or Every)")
		_, err = st.Schedule(ctx, agent.At(time.Time{}), "Work", "p")
		add("zero time", err, "agent.Agent.Schedule: task: At: the time is zero")
		_, err = st.Schedule(ctx, agent.Every(0), "Work", "p")
		add("zero interval", err, "agent.Agent.Schedule: task: Every(0s): intervalSeconds must be a positive number")
		_, err = st.Schedule(ctx, agent.Every(agent.MaxInterval+time.Second), "Work", "p")
		add("interval over 30 days", err, "agent.Agent.Schedule: task: Every(720h0m1s): intervalSeconds cannot exceed 2592000 seconds (30 days)")
		_, err = st.Schedule(ctx, agent.Cron("every tuesday"), "Work", "p")
		add("bad cron", err, `agent.Agent.Schedule: task: cron expression "every tuesday": expected exactly 5 fields, found 2: [every tuesday]`)
		_, err = st.Schedule(ctx, agent.After(0), "", "p")
		add("empty callback", err, "agent.Agent.Schedule: task: the callback name is empty")
		_, err = st.Schedule(ctx, agent.After(0), "Independent", "p", agent.TaskOptions{Independent: true})
		add("independent schedule", err, "agent.Agent.Schedule: task: Independent applies to queued tasks only")
		_, err = st.Queue(ctx, "Work", "p", agent.TaskOptions{}, agent.TaskOptions{})
		add("two options", err, "agent.Agent.Queue: task: at most one TaskOptions, got 2")
		for _, c := range cases {
			assert.ErrorIs(t, c.err, agent.ErrTask, c.name)
			assert.EqualError(t, c.err, c.msg, c.name)
		}

		_, err = st.Queue(ctx, "Nope", "p")
		assert.ErrorIs(t, err, object.ErrNoMethod)
		assert.EqualError(t, err, `agent.Agent.Queue: no such method: AGENT has no method "Nope" (it has [Count Crash Do NoArg Slow Work])`)
		_, err = st.Queue(ctx, "Work", "p", agent.TaskOptions{Retry: agent.RetryOptions{ShouldRetry: func(error, int) bool { return true }}})
		assert.ErrorIs(t, err, agent.ErrRetryOptions)
		assert.ErrorContains(t, err, "retry.ShouldRetry is a func and cannot be stored with a task")
		_, err = st.Queue(ctx, "Work", func() {})
		assert.ErrorIs(t, err, object.ErrNotPlainData, "a payload must be plain data")
		assert.EqualError(t, err, "agent.Agent.Queue: task: payload: value holds a func: value cannot be copied (only plain data is allowed here)")
		_, err = st.Dequeue(ctx, "s1")
		assert.EqualError(t, err, `agent.Agent.Dequeue("s1"): task: not a queue item id (queue item ids look like q12)`)
		_, err = st.Redrive(ctx, "d99")
		assert.EqualError(t, err, `agent.Agent.Redrive("d99"): task: no such dead letter`)
		_, err = st.Redrive(ctx, "x")
		assert.EqualError(t, err, `agent.Agent.Redrive("x"): task: not a dead letter id (dead letter ids look like d12)`)
		_, err = st.DeleteDeadLetter(ctx, "q1")
		assert.ErrorIs(t, err, agent.ErrTask)
		list, err := st.ListSchedules(ctx)
		assert.Empty(t, list, "nothing was stored")
		return err
	})
}

// A6: a callback that takes no argument runs with a nil payload; one whose
// argument does not fit is refused when the task is made (see
// TestA6_SchedulePayloadMustFitTheCallback), never run to fail later.
func TestScheduleCallbackArgumentsA6(t *testing.T) {
	w := newWorld(t, 1)
	w.inside(func(ctx context.Context, st self) error {
		if _, err := st.Queue(ctx, "NoArg", nil); err != nil {
			return err
		}
		_, err := st.Queue(ctx, "Work", 42, agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(1)}})
		assert.ErrorContains(t, err, "bad arguments")
		return nil
	})
	assert.Equal(t, []string{"noarg@0s"}, w.log)
	assert.Empty(t, w.errs)
}

// A7: an exhausted task with DeadLetter set is kept with its last error,
// listed, and re-driven to success.
func TestDeadLetterA7(t *testing.T) {
	w := newWorld(t, 3)
	w.fails["q"] = 3
	w.fails["s"] = 2
	w.fails["c"] = 2
	dl := agent.TaskOptions{DeadLetter: true, Retry: agent.RetryOptions{MaxAttempts: new(2)}}
	w.inside(func(ctx context.Context, st self) error {
		if _, err := st.Queue(ctx, "Work", "q", dl); err != nil {
			return err
		}
		if _, err := st.Schedule(ctx, agent.After(time.Minute), "Work", "s", dl); err != nil {
			return err
		}
		if _, err := st.Schedule(ctx, agent.Cron("0 * * * *"), "Work", "c", dl); err != nil {
			return err
		}
		_, err := st.Queue(ctx, "Work", "not-kept", agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(1)}})
		w.fails["not-kept"] = 1
		return err
	})
	require.NoError(t, w.rt.Advance(61*time.Minute))
	var letters []agent.DeadLetter
	w.inside(func(ctx context.Context, st self) error {
		var err error
		letters, err = st.ListDeadLetters(ctx)
		return err
	})
	require.Len(t, letters, 3, "the queue item, the one-shot and the cron run; not the task without DeadLetter")
	for i, want := range []string{"q", "s", "c"} {
		assert.Equal(t, want, letters[i].Task.Payload)
		assert.Equal(t, want+" failed", letters[i].Err, "kept with its last error")
		assert.Equal(t, 2, letters[i].Attempts)
	}
	assert.Len(t, w.errs, 4, "OnError heard of all four")
	assert.Len(t, w.events(object.EventDeadLetter), 3)

	// The cron schedule goes on; the dead letters are re-driven.
	w.log = nil
	w.fails["q"] = 1 // fails once more, then works
	w.inside(func(ctx context.Context, st self) error {
		for _, l := range letters[:2] {
			task, err := st.Redrive(ctx, l.ID)
			if err != nil {
				return err
			}
			assert.Equal(t, l.Task.Payload, task.Payload)
		}
		return nil
	})
	require.NoError(t, w.rt.Advance(time.Minute))
	var queue []agent.Task
	w.inside(func(ctx context.Context, st self) error {
		var err error
		letters, err = st.ListDeadLetters(ctx)
		if err != nil {
			return err
		}
		queue, err = st.ListQueue(ctx)
		return err
	})
	assert.ElementsMatch(t, []string{"q", "q", "s"}, payloads(w.log), "q failed once and succeeded on its second attempt; s succeeded")
	require.Len(t, letters, 1, "only the cron run is left")
	assert.Equal(t, "c", letters[0].Task.Payload)
	assert.Empty(t, queue, "the re-driven item succeeded and left the queue")
	assert.Len(t, w.events(object.EventRedrive), 2)
	w.inside(func(ctx context.Context, st self) error {
		found, err := st.DeleteDeadLetter(ctx, letters[0].ID)
		assert.True(t, found)
		return err
	})
}

func payloads(log []string) []string {
	out := make([]string, len(log))
	for i, l := range log {
		out[i] = strings.Split(l, "@")[0]
	}
	return out
}

// A6: a callback may cancel its own recurring schedule.
func TestScheduleCancelledWhileRunningA6(t *testing.T) {
	w := newWorld(t, 1)
	var id string
	w.inside(func(ctx context.Context, st self) error {
		task, err := st.Schedule(ctx, agent.Every(time.Minute), "Do", nil)
		id = task.ID
		return err
	})
	runs := 0
	w.job = func(ctx context.Context, st self) error {
		runs++
		_, err := st.CancelSchedule(ctx, id)
		return err
	}
	require.NoError(t, w.rt.Advance(10*time.Minute))
	assert.Equal(t, 1, runs, "cancelled during its run, so not scheduled again")
	assert.Contains(t, strings.Join(w.events(object.EventTaskDone), ","), "cancelled")
}

// D1 with schedules, queues, alarms, retries and breakers: one seed, one
// trace, byte for byte.
func TestScheduleTraceSameSeedD1(t *testing.T) {
	trace := func(seed uint64) string {
		w := newWorld(t, seed)
		for _, o := range []string{"a", "b"} {
			w.fails[o+":q1"], w.fails[o+":q2"], w.fails[o+":tick"], w.fails[o+":cron"] = 2, 5, 1, 3
		}
		w.alarmErr = func(info object.AlarmInfo) error {
			if info.RetryCount < 2 {
				return errors.New("not yet")
			}
			return nil
		}
		br := &agent.BreakerOptions{Name: "dep", Failures: 2, Window: time.Minute, Cooldown: 10 * time.Second}
		require.NoError(t, w.rt.Run(func(ctx context.Context) error {
			g := w.rt.Group(ctx)
			for _, name := range []string{"a", "b"} {
				g.Go(func(ctx context.Context) error {
					s, err := w.ns.GetByName(name)
					if err != nil {
						return err
					}
					w.job = func(ctx context.Context, st self) error {
						if err := st.SetAlarm(ctx, st.Now().Add(30*time.Second)); err != nil {
							return err
						}
						me := st.ID().Name() + ":"
						if _, err := st.Schedule(ctx, agent.Every(45*time.Second), "Work", me+"tick"); err != nil {
							return err
						}
						if _, err := st.Schedule(ctx, agent.Cron("*/2 * * * *"), "Work", me+"cron", agent.TaskOptions{DeadLetter: true}); err != nil {
							return err
						}
						for _, p := range []string{"q1", "q2", "q3"} {
							if _, err := st.Queue(ctx, "Work", me+p, agent.TaskOptions{Independent: p == "q2", Retry: agent.RetryOptions{MaxAttempts: new(4)}}); err != nil {
								return err
							}
						}
						_ = agent.Retry(ctx, func(context.Context, int) error { return errors.New("dep down") }, agent.RetryOptions{Breaker: br})
						return nil
					}
					_, err = s.Call(ctx, "Do")
					return err
				})
			}
			if err := g.Wait(); err != nil {
				return err
			}
			return w.rt.Sleep(ctx, 5*time.Minute)
		}))
		return w.rt.Trace()
	}
	first := trace(11)
	for _, kind := range []string{" task.run ", " retry ", " task.error ", " task.dead-letter ", " alarm.retry ", " breaker "} {
		assert.Contains(t, first, kind, "the trace shows %s events", kind)
	}
	assert.Equal(t, first, trace(11), "same seed, same trace, byte for byte")
	assert.NotEqual(t, first, trace(12), "another seed draws other delays")
	for seed := range uint64(10) {
		assert.Equal(t, trace(seed), trace(seed), "seed %d", seed)
	}
}

// A6 and O5: each attempt of a task gets its own copy of the stored
// payload; what a callback does to its copy changes nothing stored.
func TestTaskPayloadIsCopiedPerAttemptA6(t *testing.T) {
	w := newWorld(t, 1)
	w.fails["count"] = 1
	w.inside(func(ctx context.Context, st self) error {
		if _, err := st.Queue(ctx, "Count", map[string]int{"n": 0}); err != nil {
			return err
		}
		_, err := st.Schedule(ctx, agent.Every(time.Minute), "Count", map[string]int{"n": 10})
		return err
	})
	require.NoError(t, w.rt.Advance(150*time.Second))
	assert.Equal(t, []string{"n=0", "n=0", "n=10", "n=10"}, payloads(w.log), "a retry and a second run see the payload as stored")
}

// A6: the Agents SDK's schedule rules (agents 0.32.0 on real workerd
// 1.20261117.1, issue 34 row 10): schedule(-10, cb) is accepted and runs
// at once; an interval of 30 days is the most scheduleEvery takes; an
// unknown callback is refused in the SDK's words.
func TestA6_ScheduleTakesTheSDKsBounds(t *testing.T) {
	w := newWorld(t, 1)
	w.inside(func(ctx context.Context, st self) error {
		task, err := st.Schedule(ctx, agent.After(-10*time.Second), "Work", "p")
		require.NoError(t, err, "a delay already past is accepted")
		assert.Equal(t, st.Now(), task.Time, "and due at once")
		_, err = st.Schedule(ctx, agent.Every(agent.MaxInterval), "Work", "p")
		assert.NoError(t, err, "30 days is the longest interval")
		_, err = st.Schedule(ctx, agent.After(0), "Nope", "p")
		assert.ErrorIs(t, err, object.ErrNoMethod)
		assert.ErrorContains(t, err, `agent.Agent.Schedule: Unknown scheduled callback "Nope": not registered on this Scheduler`)
		return nil
	})
}
