package agent

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
)

// This file is where a task's failure goes: an object's OnError (rule A6).

// ErrorHandler is implemented by objects that want the errors of their
// scheduled and queued tasks (rule A6): after a run's last failed attempt,
// OnError receives a *TaskError, in the same turn. A panic in OnError is
// recorded in the trace and otherwise ignored.
type ErrorHandler interface {
	OnError(ctx context.Context, err error)
}

// TaskError is the error OnError receives when a task's attempts ran out.
type TaskError struct {
	Task     Task  // the task as it ran
	Attempts int   // attempts made in the run
	Err      error // the last attempt's error
}

// Error names the task, its attempts and the last error.
func (e *TaskError) Error() string {
	return fmt.Sprintf("task %s (%s %s): %d attempt(s) failed, the last with: %v", e.Task.ID, e.Task.Kind, e.Task.Callback, e.Attempts, e.Err)
}

// Unwrap returns the last attempt's error.
func (e *TaskError) Unwrap() error { return e.Err }

// onError hands a task's error to the object's OnError, if it has one.
func (s *turn) onError(ctx context.Context, err error) {
	inst, ierr := s.host.Instance()
	h, ok := inst.(ErrorHandler)
	if ierr != nil || !ok {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			s.event(object.Event{Kind: object.EventTaskError, Panic: fmt.Sprint(p)})
		}
	}()
	h.OnError(ctx, err)
}
