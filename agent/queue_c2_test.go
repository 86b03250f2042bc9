package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// C2 and A6: a failing queue item's retry is a lane turn of its own, not a
// sleep inside one, and the item still holds the queue: the item behind
// it runs only when its run has ended. A request served during the
// backoff sees the item still queued and the one behind it not run.
func TestC2A6_RetryIsALaneTurnOfItsOwnAndStillBlocks(t *testing.T) {
	w := newWorld(t, 3)
	w.fails["a"] = 1
	slow := agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(3), BaseDelayMs: new(1000), MaxDelayMs: new(1000)}}
	var queued []string
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		if err := w.do(ctx, "a", func(ctx context.Context, st self) error {
			for _, p := range []string{"a", "b"} {
				if _, err := st.Queue(ctx, "Work", p, slow); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if err := w.rt.Sleep(ctx, time.Millisecond); err != nil { // a's first attempt has failed
			return err
		}
		return w.do(ctx, "a", func(ctx context.Context, st self) error {
			q, err := st.ListQueue(ctx)
			for _, task := range q {
				queued = append(queued, task.Payload.(string))
			}
			return err
		})
	}))
	assert.Equal(t, []string{"a", "b"}, queued, "during a's backoff both items are queued, b has not run")
	require.Len(t, w.log, 3)
	assert.Equal(t, "a@0s", w.log[0])
	assert.Equal(t, payloads(w.log), []string{"a", "a", "b"}, "b waits for a's retry")
	assert.Equal(t, w.log[1][2:], w.log[2][2:], "b runs in the lane turn of a's retry, at its instant")
}

// C2 and A6: a run waiting for its retry survives a reset of the object:
// the next instance makes the run's next attempt (not its first again),
// and the item still holds the queue meanwhile.
func TestC2A6_RetryingRunSurvivesAReset(t *testing.T) {
	w := newWorld(t, 4)
	w.fails["a"] = 2
	opts := agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(3), BaseDelayMs: new(1000), MaxDelayMs: new(1000)}}
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		if err := w.do(ctx, "a", func(ctx context.Context, st self) error {
			if _, err := st.Queue(ctx, "Work", "a", opts); err != nil {
				return err
			}
			_, err := st.Queue(ctx, "Work", "b")
			return err
		}); err != nil {
			return err
		}
		if err := w.rt.Sleep(ctx, time.Millisecond); err != nil {
			return err
		}
		return w.ns.Reset(w.ns.IDFromName("a"), transport.ResetCodeUpdate)
	}))
	assert.Equal(t, []string{"a", "a", "a", "b"}, payloads(w.log), "three attempts in all, then b")
	assert.Empty(t, w.errs, "a's third attempt succeeded")
	left := w.ns.Storage(w.ns.IDFromName("a")).Snapshot()
	assert.Len(t, left, 1, "only the task counter is left, no retry state: %v", left)
}

// C2 and A6: an item cancelled while its run waits for a retry ends its
// run with a task.done "cancelled" event, and no other attempt.
func TestC2A6_CancelWhileRetryingEndsTheRun(t *testing.T) {
	w := newWorld(t, 5)
	w.fails["a"] = 9
	opts := agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(5), BaseDelayMs: new(1000), MaxDelayMs: new(1000)}}
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		var id string
		if err := w.do(ctx, "a", func(ctx context.Context, st self) error {
			task, err := st.Queue(ctx, "Work", "a", opts)
			id = task.ID
			return err
		}); err != nil {
			return err
		}
		if err := w.rt.Sleep(ctx, time.Millisecond); err != nil {
			return err
		}
		return w.do(ctx, "a", func(ctx context.Context, st self) error {
			found, err := st.Dequeue(ctx, id)
			assert.True(t, found)
			return err
		})
	}))
	assert.Equal(t, []string{"a"}, payloads(w.log))
	done := w.events(object.EventTaskDone)
	require.Len(t, done, 1)
	assert.Contains(t, done[0], "cancelled")
}
