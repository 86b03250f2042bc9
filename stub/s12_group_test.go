package stub_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S12, issue 14: a promise started in a Group task can be pipelined on
// after that task has ended, from a task that is still running, as one
// started by any other task can: the pipelined call runs in a task of its
// own, so the starter's end must not make it fail with ErrNotInTask.
func TestS12_PipelineOnAPromiseStartedByAnEndedGroupTask(t *testing.T) {
	w := newWorld(t, 2)
	s := w.stub(t)
	var who any
	var qerr error
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		var p *stub.Promise
		g := w.rt.Group(ctx)
		g.Go(func(ctx context.Context) error {
			p = s.Start(ctx, "Session", "ada")
			return nil
		})
		if err := g.Wait(); err != nil {
			return err
		}
		who, qerr = p.Pipeline("Whoami").Await()
		return nil
	}))
	require.NoError(t, qerr)
	assert.Equal(t, "ada", who)
	calls := w.rt.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, transport.OutcomeOK, calls[1].Outcome)
}
