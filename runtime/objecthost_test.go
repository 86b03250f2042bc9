package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A6 with a broken constructor: the queue cannot run, Run still returns,
// and the queue runs once the object can be built again.
func TestQueueWaitsForABuildableObjectA6(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Start", Fault: transport.FailAfterDelivery})
	rt := newRuntime(t, runtime.WithFaults(plan))
	broken := false
	ran := 0
	ns := rt.Namespace("Q", func(st *object.State) object.Object {
		if broken {
			panic("cannot build")
		}
		return &queuer{st: st, ran: &ran}
	})
	s := mustStub(t, ns, "q")
	err := rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Start") // queues an item, then the object is reset
		broken = true
		return err
	})
	require.Error(t, err, "Start fails after delivery")
	assert.Zero(t, ran)
	assert.Contains(t, rt.Trace(), "task.error lane=queue retry-in=2s")
	broken = false
	require.NoError(t, rt.Advance(3*time.Second))
	assert.Equal(t, 1, ran, "the stored item ran once the object could be built")
}

type queuer struct {
	agent.Agent
	st  *object.State
	ran *int
}

func (q *queuer) Methods() object.Methods {
	return object.Methods{
		"Start": object.Func(func(ctx context.Context) error { _, err := q.Queue(ctx, "Item", nil); return err }),
		"Item":  object.Func(func(ctx context.Context) error { *q.ran++; return nil }),
	}
}
