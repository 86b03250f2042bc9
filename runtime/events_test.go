package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ticker schedules a tick that fails once.
type ticker struct {
	agent.Agent
	st    *object.State
	fails *int
}

func (tk *ticker) Methods() object.Methods {
	return object.Methods{
		"Start": object.Func(func(ctx context.Context) error {
			_, err := tk.Schedule(ctx, agent.After(time.Second), "Tick", nil)
			return err
		}),
		"Tick": object.Func(func(ctx context.Context) error {
			if *tk.fails > 0 {
				*tk.fails--
				return errors.New("tick failed")
			}
			return nil
		}),
	}
}

// D1, D2: the typed event log records what tasks did, and Trace shows it.
func TestEventsInTraceD1(t *testing.T) {
	rt := newRuntime(t, runtime.WithSeed(4))
	fails := 1
	ns := rt.Namespace("TICKER", func(st *object.State) object.Object { return &ticker{st: st, fails: &fails} })
	s := mustStub(t, ns, "t")
	run(t, rt, func(ctx context.Context) error {
		if _, err := s.Call(ctx, "Start"); err != nil {
			return err
		}
		return rt.Sleep(ctx, 2*time.Second)
	})
	events := rt.Events()
	require.Len(t, events, 4)
	assert.Equal(t, object.Event{At: time.Second, Namespace: "TICKER", Object: "t", Kind: object.EventTaskRun,
		Task: "s1", TaskKind: "delayed", Callback: "Tick", Attempt: 1}, events[0])
	assert.Equal(t, "task=s1 kind=delayed callback=Tick attempt=1", events[0].Text())
	assert.Equal(t, object.Event{At: time.Second, Namespace: "TICKER", Object: "t", Kind: object.EventRetry,
		Task: "s1", TaskKind: "delayed", Callback: "Tick", Attempt: 1, Delay: events[1].Delay, Err: "tick failed"}, events[1],
		"typed fields, not a string to parse")
	kinds := []object.EventKind{}
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []object.EventKind{object.EventTaskRun, object.EventRetry, object.EventTaskRun, object.EventTaskDone}, kinds)
	trace := rt.Trace()
	assert.Contains(t, trace, "event at=1s TICKER/t task.run task=s1 kind=delayed callback=Tick attempt=1\n")
	assert.Equal(t, 4, strings.Count(trace, "\nevent "))
	events[0].Task = "changed"
	assert.NotEqual(t, "changed", rt.Events()[0].Task, "Events returns a copy")
}

// D1: events carry typed fields, and Text writes each kind exactly as the
// trace wrote its detail string before the fields were typed, so traces
// and timelines stay byte-identical.
func TestEventTextKeepsTheTraceFormatD1(t *testing.T) {
	next := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		e    object.Event
		want string
	}{
		{object.Event{Kind: object.EventAlarm}, "retry=0"},
		{object.Event{Kind: object.EventAlarmGaveUp, Retry: 6, Err: "down"}, `retry=6 err="down"`},
		{object.Event{Kind: object.EventAlarmRetry, Retry: 2, Delay: 4 * time.Second, Err: "down"}, `retry=2 in=4s err="down"`},
		{object.Event{Kind: object.EventRetry, Attempt: 1, Delay: 150 * time.Millisecond, Err: "x"}, `attempt=1 delay=150ms err="x"`},
		{object.Event{Kind: object.EventRetry, Task: "q1", TaskKind: "queue", Callback: "Send", Attempt: 2, Delay: time.Second, Err: "x"}, `task=q1 kind=queue callback=Send attempt=2 delay=1s err="x"`},
		{object.Event{Kind: object.EventRetryGaveUp, Attempt: 3, Reason: "attempts-used-up", Err: "x"}, `attempt=3 reason=attempts-used-up err="x"`},
		{object.Event{Kind: object.EventTaskRun, Task: "s1", TaskKind: "delayed", Callback: "Tick", Attempt: 1}, "task=s1 kind=delayed callback=Tick attempt=1"},
		{object.Event{Kind: object.EventTaskDone, Task: "s1", TaskKind: "delayed", Callback: "Tick", Note: "removed"}, "task=s1 kind=delayed callback=Tick removed"},
		{object.Event{Kind: object.EventTaskDone, Task: "c1", TaskKind: "cron", Callback: "Tick", Next: next}, "task=c1 kind=cron callback=Tick next=2030-01-02T03:04:05.000000006Z"},
		{object.Event{Kind: object.EventDeadLetter, Task: "q1", TaskKind: "queue", Callback: "Send", Dead: "d3"}, "task=q1 kind=queue callback=Send dead=d3"},
		{object.Event{Kind: object.EventRedrive, Task: "q4", TaskKind: "queue", Callback: "Send", Dead: "d3"}, "dead=d3 task=q4 kind=queue callback=Send"},
		{object.Event{Kind: object.EventBreaker, Name: "mail", State: "open"}, "name=mail state=open"},
		{object.Event{Kind: object.EventBreakerRefused, Name: "mail", Note: "open"}, "name=mail open"},
		{object.Event{Kind: object.EventTaskError, Lane: "queue", Delay: 2 * time.Second, Err: "cannot build"}, `lane=queue retry-in=2s err="cannot build"`},
		{object.Event{Kind: object.EventTaskError, Note: "index", Err: "x"}, `index err="x"`},
		{object.Event{Kind: object.EventTaskError, Key: "task/q/1", Err: "x"}, `key=task/q/1 err="x"`},
		{object.Event{Kind: object.EventTaskError, Task: "q1", TaskKind: "queue", Callback: "Send", Attempts: 3, Err: "x\n"}, `task=q1 kind=queue callback=Send attempts=3 err="x\n"`},
		{object.Event{Kind: object.EventTaskError, Task: "q1", TaskKind: "queue", Callback: "Send", Note: "dead-letter", Err: "x"}, `task=q1 kind=queue callback=Send dead-letter err="x"`},
		{object.Event{Kind: object.EventTaskError, Panic: "boom"}, "OnError panicked: boom"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.e.Text(), "%s", tc.e.Kind)
	}
}
