package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/internal/seal"
	objturn "github.com/dosim/dosim/internal/turn"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
)

// Agent gives an object class the Agents SDK's task methods: Schedule,
// Queue, their listings and cancellations, and the dead-letter store.
// Embed it in the class, as a Cloudflare Agent extends the Agent class:
//
//	type Reminders struct {
//		agent.Agent
//		st *object.State
//	}
//
// Its zero value is ready to use: each method finds the object's State
// from the ctx of the turn it is called in (a method, an Alarm handler or
// a task callback), and ErrNotInObject is wrapped by the error of a call
// outside one. The runtime runs the tasks through the instance, which the
// embedded Agent makes an object.TaskRunner; a class that keeps an Agent
// in a named field instead has no tasks run, and Schedule and Queue
// refuse it.
//
// Agent holds the in-memory index of the object's stored tasks, so it is
// per instance as the State is: an object reset drops it with the
// instance, and the next instance rebuilds it from storage.
type Agent struct {
	tasks *taskIndex // in-memory order of the stored tasks; nil until used
}

var _ object.TaskRunner = (*Agent)(nil)

// RunTasks runs the due tasks of lane, then reports when the lane is next
// due. For package runtime, which reaches it through the instance
// (object.TaskRunner).
func (a *Agent) RunTasks(ctx context.Context, lane wire.Lane) {
	s, err := a.turn(ctx, "agent.Agent.RunTasks")
	if err != nil {
		return
	}
	s.runLane(ctx, lane)
}

// turn is the object whose turn runs: its State, what the host gives it,
// and, for the task methods, its Agent. The methods that were once State's
// are its methods.
type turn struct {
	st      *object.State
	host    object.Host
	storage *object.Storage
	a       *Agent // nil for Retry
}

// turnOf returns the turn of the object whose turn runs on ctx.
func turnOf(ctx context.Context, op string) (*turn, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%s: ctx is nil", op)
	}
	st, _ := objturn.StateFrom[*object.State](ctx)
	if st == nil {
		return nil, fmt.Errorf("%s: %w", op, ErrNotInObject)
	}
	host, storage := object.Hosting(seal.Key{}).Of(st)
	return &turn{st: st, host: host, storage: storage}, nil
}

// turn is turnOf for a's methods.
func (a *Agent) turn(ctx context.Context, op string) (*turn, error) {
	s, err := turnOf(ctx, op)
	if err != nil {
		return nil, err
	}
	s.a = a
	return s, nil
}

// Now is the virtual wall clock.
func (s *turn) Now() time.Time { return s.host.Now() }

// event records a trace event attributed to the object.
func (s *turn) event(e object.Event) { s.host.Event(e) }
