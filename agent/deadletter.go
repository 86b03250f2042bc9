package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/object"
)

// DeadLetter is a task whose attempts ran out, kept with its last error
// because it was made with TaskOptions.DeadLetter (rule A7, opt-in).
type DeadLetter struct {
	ID       string    // "d14"
	Task     Task      // the task as it ran (for a recurring schedule: that run)
	Err      string    // the last attempt's error
	Attempts int       // attempts made in the run
	At       time.Time // when its attempts ran out
}

// deadRecord is how a dead letter is stored, under deadKeys.
type deadRecord struct {
	Seq      uint64
	Task     taskRecord
	Err      string
	Attempts int
	At       time.Time
}

func deadKey(seq uint64) string { return fmt.Sprintf("%s%020d", deadKeys, seq) }

func (d *deadRecord) letter() DeadLetter {
	return DeadLetter{ID: fmt.Sprintf("d%d", d.Seq), Task: d.Task.task(), Err: d.Err, Attempts: d.Attempts, At: d.At}
}

// deadLetter keeps an exhausted task in the dead-letter store.
func (s *turn) deadLetter(ctx context.Context, rec *taskRecord, attempts int, cause error) {
	seq, err := s.nextSeq(ctx)
	if err == nil {
		d := deadRecord{Seq: seq, Task: *rec, Err: cause.Error(), Attempts: attempts, At: s.Now()}
		err = s.storage.Put(ctx, deadKey(seq), d)
	}
	if err != nil {
		s.event(rec.event(object.EventTaskError, object.Event{Note: "dead-letter", Err: err.Error()}))
		return
	}
	s.event(rec.event(object.EventDeadLetter, object.Event{Dead: fmt.Sprintf("d%d", seq)}))
}

// ListDeadLetters returns the object's dead letters, oldest first.
func (a *Agent) ListDeadLetters(ctx context.Context) ([]DeadLetter, error) {
	s, err := a.turn(ctx, "agent.Agent.ListDeadLetters")
	if err != nil {
		return nil, err
	}
	es, err := s.storage.List(ctx, object.ListOptions{Prefix: deadKeys})
	if err != nil {
		return nil, fmt.Errorf("agent.Agent.ListDeadLetters: %w", err)
	}
	out := make([]DeadLetter, len(es))
	for i, e := range es {
		var d deadRecord
		if err := e.Decode(&d); err != nil {
			return nil, fmt.Errorf("agent.Agent.ListDeadLetters: %w: %s holds no dead letter: %w", object.ErrStorage, e.Key, err)
		}
		out[i] = d.letter()
	}
	return out, nil
}

// Redrive sends the dead letter with id back to run again, with the
// options it had, and removes it from the store: a queue item goes to the
// back of the queue; a scheduled task runs once, now (a recurring one
// keeps its own schedule meanwhile). It returns the new task.
func (a *Agent) Redrive(ctx context.Context, id string) (Task, error) {
	s, err := a.turn(ctx, "agent.Agent.Redrive")
	if err != nil {
		return Task{}, err
	}
	const op = "agent.Agent.Redrive"
	d, key, err := s.deadLetterByID(ctx, op, id)
	if err != nil {
		return Task{}, err
	}
	rec := taskRecord{Kind: TaskDelayed, Callback: d.Task.Callback, Payload: d.Task.Payload, Due: s.Now()}
	if d.Task.Kind == TaskQueued {
		rec.Kind = TaskQueued
	}
	o := TaskOptions{Retry: d.Task.Retry.options(), DeadLetter: d.Task.DeadLetter, Independent: d.Task.Independent}
	t, err := s.addTask(ctx, op, rec, o)
	if err != nil {
		return Task{}, err
	}
	if _, err := s.storage.Delete(ctx, key); err != nil {
		return t, fmt.Errorf("%s(%q): %w", op, id, err)
	}
	s.event(object.Event{Kind: object.EventRedrive, Dead: id, Task: t.ID, TaskKind: string(t.Kind), Callback: t.Callback})
	return t, nil
}

// DeleteDeadLetter removes the dead letter with id and reports whether
// there was one.
func (a *Agent) DeleteDeadLetter(ctx context.Context, id string) (bool, error) {
	s, err := a.turn(ctx, "agent.Agent.DeleteDeadLetter")
	if err != nil {
		return false, err
	}
	seq, err := deadSeq("agent.Agent.DeleteDeadLetter", id)
	if err != nil {
		return false, err
	}
	return s.storage.Delete(ctx, deadKey(seq))
}

func deadSeq(op, id string) (uint64, error) {
	seq, ok := parseID(id, 'd')
	if !ok {
		return 0, fmt.Errorf("%s(%q): %w: not a dead letter id (dead letter ids look like d12)", op, id, ErrTask)
	}
	return seq, nil
}

func (s *turn) deadLetterByID(ctx context.Context, op, id string) (deadRecord, string, error) {
	seq, err := deadSeq(op, id)
	if err != nil {
		return deadRecord{}, "", err
	}
	var d deadRecord
	key := deadKey(seq)
	found, err := s.storage.Get(ctx, key, &d)
	if err != nil {
		return deadRecord{}, "", fmt.Errorf("%s(%q): %w", op, id, err)
	}
	if !found {
		return deadRecord{}, "", fmt.Errorf("%s(%q): %w: no such dead letter", op, id, ErrTask)
	}
	return d, key, nil
}
