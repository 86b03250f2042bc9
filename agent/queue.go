package agent

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/internal/wire"
)

// Queue appends a task that runs the object's method callback with payload
// as its argument, as soon as the items queued before it are done (rule
// A6). Queue items run in order, one at a time, each in a turn of its own
// through the object's input gate, with the attempts of its retry policy.
// By default a failing item is retried with a simulated sleep and blocks
// the items behind it until its attempts are used up; with
// TaskOptions.Independent it retries on its own timer and the items behind
// it run meanwhile (rule A7). After the last failed attempt the error goes
// to the object's OnError, and the item leaves the queue.
//
// The item, its payload and its options are stored in the object's
// storage: they survive an object reset. The callback and the options are
// checked as Schedule checks them. At most one TaskOptions may be given.
func (a *Agent) Queue(ctx context.Context, callback string, payload any, opts ...TaskOptions) (Task, error) {
	s, err := a.turn(ctx, "agent.Agent.Queue")
	if err != nil {
		return Task{}, err
	}
	const op = "agent.Agent.Queue"
	o, err := taskOptions(op, opts, true)
	if err != nil {
		return Task{}, err
	}
	return s.addTask(ctx, op, taskRecord{Kind: TaskQueued, Callback: callback, Payload: payload, Due: s.Now()}, o)
}

// ListQueue returns the object's queued items in queue order. An
// Independent item waiting for a retry keeps its place; its Time says when
// it runs again.
func (a *Agent) ListQueue(ctx context.Context) ([]Task, error) {
	s, err := a.turn(ctx, "agent.Agent.ListQueue")
	if err != nil {
		return nil, err
	}
	recs, err := s.records(ctx, queueKeys)
	if err != nil {
		return nil, fmt.Errorf("agent.Agent.ListQueue: %w", err)
	}
	out := make([]Task, len(recs))
	for i := range recs {
		out[i] = recs[i].task()
	}
	return out, nil
}

// Dequeue removes the queue item with id and reports whether there was
// one. An item that is running finishes its current attempt and makes no
// other.
func (a *Agent) Dequeue(ctx context.Context, id string) (bool, error) {
	s, err := a.turn(ctx, "agent.Agent.Dequeue")
	if err != nil {
		return false, err
	}
	seq, ok := parseID(id, 'q')
	if !ok {
		return false, fmt.Errorf("agent.Agent.Dequeue(%q): %w: not a queue item id (queue item ids look like q12)", id, ErrTask)
	}
	return s.removeTask(ctx, wire.LaneQueue, seq)
}

// DequeueAll empties the queue and returns how many items it removed.
func (a *Agent) DequeueAll(ctx context.Context) (int, error) {
	s, err := a.turn(ctx, "agent.Agent.DequeueAll")
	if err != nil {
		return 0, err
	}
	recs, err := s.records(ctx, queueKeys)
	if err != nil {
		return 0, fmt.Errorf("agent.Agent.DequeueAll: %w", err)
	}
	for i := range recs {
		if _, err := s.removeTask(ctx, wire.LaneQueue, recs[i].Seq); err != nil {
			return i, fmt.Errorf("agent.Agent.DequeueAll: %w", err)
		}
	}
	return len(recs), nil
}
