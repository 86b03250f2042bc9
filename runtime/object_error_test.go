package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// brokenErr is an error whose Error method panics.
type brokenErr struct{}

func (brokenErr) Error() string { panic("boom") }

// liar returns brokenErr from a method and from its alarm handler.
type liar struct {
	agent.Agent
	st *object.State
}

func (l *liar) Methods() object.Methods {
	return object.Methods{
		"Lie": object.Func(func(ctx context.Context) error { return brokenErr{} }),
		"Arm": object.Func(func(ctx context.Context) error { return l.st.SetAlarm(ctx, l.st.Now().Add(time.Second)) }),
		"Later": object.Func(func(ctx context.Context) error {
			_, err := l.Schedule(ctx, agent.After(time.Second), "Lie", nil)
			return err
		}),
	}
}

func (l *liar) Alarm(ctx context.Context, info object.AlarmInfo) error { return brokenErr{} }

// Rule S4: an error whose Error method panics is the object's, read in its
// own turn and returned to the caller as a Remote error naming the method
// (it was blamed on the caller: task "root" panicked, exit 3). An alarm
// handler's and a scheduled task's are recorded the same way.
func TestS4_AnObjectErrorWhoseErrorPanicsIsTheObjects(t *testing.T) {
	rt := newRuntime(t)
	ns := rt.Namespace("L", func(st *object.State) object.Object { return &liar{st: st} })
	s := mustStub(t, ns, "x")
	run(t, rt, func(ctx context.Context) error {
		_, err := s.Call(ctx, "Lie")
		require.Error(t, err)
		var e *stub.Error
		require.True(t, errors.As(err, &e))
		assert.True(t, e.Remote)
		assert.Equal(t, "object error: L/x.Lie returned an error (runtime_test.brokenErr) whose Error method panicked: boom", e.Msg)
		_, err = s.Call(ctx, "Arm")
		require.NoError(t, err)
		_, err = s.Call(ctx, "Later")
		require.NoError(t, err)
		return rt.Sleep(ctx, 10*time.Second)
	})
	calls := rt.Calls()
	require.NotEmpty(t, calls)
	assert.Contains(t, calls[0].Err, "object error: L/x.Lie returned an error (runtime_test.brokenErr) whose Error method panicked: boom")
	var errs []string
	for _, ev := range rt.Events() {
		if ev.Err != "" {
			errs = append(errs, ev.Err)
		}
	}
	assert.Contains(t, errs, "L/x.Alarm returned an error (runtime_test.brokenErr) whose Error method panicked: boom", "the alarm's failure")
	assert.Contains(t, errs, "L/x.Lie returned an error (runtime_test.brokenErr) whose Error method panicked: boom", "the task's failure")
}
