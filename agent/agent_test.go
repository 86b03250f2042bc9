package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// unembedded keeps its Agent in a named field: the runtime cannot reach
// it through the instance, so its tasks would never run.
type unembedded struct {
	a  agent.Agent
	st *object.State
}

func (u *unembedded) Methods() object.Methods {
	return object.Methods{
		"Start": object.Func(func(ctx context.Context) error { _, err := u.a.Queue(ctx, "Item", nil); return err }),
		"Item":  object.Func(func(ctx context.Context) error { return nil }),
	}
}

// Rule A6: tasks belong to a class that embeds agent.Agent; one that does
// not is refused when it makes one, and the Agent's methods outside an
// object turn say so.
func TestA6_TasksNeedAClassThatEmbedsAgent(t *testing.T) {
	rt := runtime.New(runtime.WithLogger(zaptest.NewLogger(t)))
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	ns := rt.Namespace("PLAIN", func(st *object.State) object.Object { return &unembedded{st: st} })
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("a")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Start")
		return err
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent.Agent.Queue: task: *agent_test.unembedded does not embed agent.Agent, so its tasks would never run")

	var a agent.Agent
	_, err = a.Queue(context.Background(), "Item", nil)
	assert.True(t, errors.Is(err, agent.ErrNotInObject), "outside a turn: %v", err)
	_, known := agent.Breaker(context.Background(), "any")
	assert.False(t, known)
}
