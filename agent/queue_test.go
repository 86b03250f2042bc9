package agent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A6: queue items run in order, one at a time, even when each yields the
// object's gate while it runs; each leaves the queue when done.
func TestQueueInOrderOneAtATimeA6(t *testing.T) {
	w := newWorld(t, 9)
	w.inside(func(ctx context.Context, st self) error {
		for _, p := range []string{"a", "b", "c"} {
			if _, err := st.Queue(ctx, "Slow", p); err != nil {
				return err
			}
		}
		return nil
	})
	assert.Equal(t, []string{"a:start@0s", "a:end@1s", "b:start@1s", "b:end@2s", "c:start@2s", "c:end@3s"}, w.log,
		"Run waits for the queue to drain, one item at a time, in order")
	w.inside(func(ctx context.Context, st self) error {
		q, err := st.ListQueue(ctx)
		assert.Empty(t, q)
		return err
	})
}

// A6: listing and dequeuing.
func TestQueueListAndDequeueA6(t *testing.T) {
	w := newWorld(t, 1)
	w.inside(func(ctx context.Context, st self) error {
		// Hold the queue back: the items cannot run while this turn holds the gate.
		var ids []string
		for _, p := range []string{"a", "b", "c", "d"} {
			task, err := st.Queue(ctx, "Work", p)
			if err != nil {
				return err
			}
			assert.Equal(t, agent.TaskQueued, task.Kind)
			ids = append(ids, task.ID)
		}
		found, err := st.Dequeue(ctx, ids[1])
		require.NoError(t, err)
		assert.True(t, found)
		q, err := st.ListQueue(ctx)
		require.NoError(t, err)
		var got []any
		for _, task := range q {
			got = append(got, task.Payload)
		}
		assert.Equal(t, []any{"a", "c", "d"}, got, "in queue order")
		found, err = st.Dequeue(ctx, ids[1])
		assert.False(t, found)
		assert.NoError(t, err)
		_, err = st.Dequeue(ctx, ids[0])
		require.NoError(t, err)
		n, err := st.DequeueAll(ctx)
		assert.Equal(t, 2, n)
		return err
	})
	assert.Empty(t, w.log, "dequeued items never run")
}

// A6: head-of-line blocking in the default queue; A7: none in the
// independent mode, where a failed item retries on its own timer.
func TestQueueHeadOfLineA7(t *testing.T) {
	cases := []struct {
		name        string
		independent bool
		want        []string
	}{
		{name: "default: the items behind wait for the failing one's retries", want: []string{"a", "a", "a", "b", "c"}},
		{name: "independent: the items behind run while it waits", independent: true, want: []string{"a", "b", "c", "a", "a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, 5)
			w.fails["a"] = 2
			opts := agent.TaskOptions{Independent: c.independent, Retry: agent.RetryOptions{BaseDelayMs: new(1000), MaxDelayMs: new(1000)}}
			w.inside(func(ctx context.Context, st self) error {
				for _, p := range []string{"a", "b", "c"} {
					if _, err := st.Queue(ctx, "Work", p, opts); err != nil {
						return err
					}
				}
				return nil
			})
			assert.Equal(t, c.want, payloads(w.log))
			assert.Empty(t, w.errs, "a succeeded on its third attempt")
			if c.independent {
				assert.Equal(t, "b@0s", w.log[1], "b ran at once, right after a's first failure")
			} else {
				assert.NotEqual(t, "b@0s", w.log[3], "b waited for a's retries")
			}
		})
	}
	t.Run("independent: exhausted items go to OnError and leave the queue", func(t *testing.T) {
		w := newWorld(t, 5)
		w.fails["a"] = 9
		w.inside(func(ctx context.Context, st self) error {
			_, err := st.Queue(ctx, "Work", "a", agent.TaskOptions{Independent: true, Retry: agent.RetryOptions{MaxAttempts: new(4)}})
			return err
		})
		assert.Equal(t, []string{"a", "a", "a", "a"}, payloads(w.log))
		require.Len(t, w.errs, 1)
		var te *agent.TaskError
		require.ErrorAs(t, w.errs[0], &te)
		assert.Equal(t, 4, te.Attempts)
		assert.Len(t, w.events(object.EventRetry), 3, "three retries, each on the queue's timer")
	})
}

// A6: an item dequeued while it waits for a retry makes no other attempt.
func TestQueueDequeuedWhileRetryingA6(t *testing.T) {
	w := newWorld(t, 5)
	w.fails["a"] = 9
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		var id string
		err := w.do(ctx, "a", func(ctx context.Context, st self) error {
			task, err := st.Queue(ctx, "Work", "a", agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(5), BaseDelayMs: new(1000), MaxDelayMs: new(1000)}})
			id = task.ID
			return err
		})
		if err != nil {
			return err
		}
		if err := w.rt.Sleep(ctx, time.Millisecond); err != nil { // let the first attempt run
			return err
		}
		return w.do(ctx, "a", func(ctx context.Context, st self) error { // runs while the item sleeps
			_, err := st.Dequeue(ctx, id)
			return err
		})
	}))
	assert.Equal(t, []string{"a"}, payloads(w.log), "one attempt, then dequeued during its backoff")
	assert.Empty(t, w.errs, "a cancelled item is not an error")
}

// drainer fills its queue with items that each fail once.
type drainer struct {
	agent.Agent
	st     *object.State
	failed map[int]bool
	done   int
}

func (d *drainer) Methods() object.Methods {
	return object.Methods{
		"Fill": object.Func(func(ctx context.Context, n int) error {
			for i := range n {
				if _, err := d.Queue(ctx, "Item", i); err != nil {
					return err
				}
			}
			return nil
		}),
		"Item": object.Func(func(ctx context.Context, i int) error {
			if !d.failed[i] {
				d.failed[i] = true
				return errors.New("first attempt fails")
			}
			d.done++
			return nil
		}),
	}
}

// BenchmarkQueueDrain queues 10,000 items, each failing once before it
// succeeds, and runs the queue dry: enqueue, 20,000 attempts, 10,000
// backoff sleeps. It reports items per second of real time.
func BenchmarkQueueDrain(b *testing.B) {
	const items = 10_000
	b.ReportAllocs()
	for range b.N {
		rt := runtime.New(runtime.WithSeed(1))
		var d *drainer
		ns := rt.Namespace("DRAIN", func(st *object.State) object.Object {
			d = &drainer{st: st, failed: map[int]bool{}}
			return d
		})
		err := rt.Run(func(ctx context.Context) error {
			s, err := ns.GetByName("q")
			if err != nil {
				return err
			}
			_, err = s.Call(ctx, "Fill", items)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if d.done != items {
			b.Fatalf("%d items done, want %d", d.done, items)
		}
		b.StopTimer()
		if err := rt.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(items*b.N)/b.Elapsed().Seconds(), "items/s")
}

// The benchmark's program, checked as a test with fewer items.
func TestQueueDrainA6(t *testing.T) {
	rt := runtime.New(runtime.WithSeed(1))
	defer rt.Close()
	var d *drainer
	ns := rt.Namespace("DRAIN", func(st *object.State) object.Object {
		d = &drainer{st: st, failed: map[int]bool{}}
		return d
	})
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("q")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Fill", 200)
		return err
	}))
	assert.Equal(t, 200, d.done)
	assert.Equal(t, 1, ns.Storage(ns.IDFromName("q")).Len(), "only the task counter is left: "+fmt.Sprint(ns.Storage(ns.IDFromName("q")).Snapshot()))
	assert.Greater(t, rt.Elapsed(), time.Duration(0), "the backoff sleeps took virtual time")
}
