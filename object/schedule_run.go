package object

import (
	"context"
	"errors"
	"time"

	"github.com/dosim/dosim/internal/wire"
)

func init() {
	wire.RunLane = func(ctx context.Context, state any, lane wire.Lane) { state.(*State).runLane(ctx, lane) }
}

// runLane runs the lane's due tasks one at a time, in (due, creation)
// order, then reports when the lane is next due. The host calls it in a
// turn that holds the object's input gate.
func (s *State) runLane(ctx context.Context, lane wire.Lane) {
	for {
		rec, ok := s.popDue(ctx, lane)
		if !ok {
			break
		}
		s.runTask(ctx, rec)
	}
	s.reportDue(ctx, lane)
}

// popDue takes the earliest due task of lane out of the index and reads it
// from storage.
func (s *State) popDue(ctx context.Context, lane wire.Lane) (*taskRecord, bool) {
	for {
		idx := s.index(ctx)
		e, ok := idx.peek(lane)
		if !ok || e.due.After(s.Now()) {
			return nil, false
		}
		idx.remove(lane, e.seq)
		var rec taskRecord
		key := taskKey(lane, e.seq)
		if found, err := s.storage.Get(ctx, key, &rec); err != nil || !found {
			if err != nil {
				s.event(wire.Event{Kind: EventTaskError, Key: key, Err: err.Error()})
			}
			continue
		}
		return &rec, true
	}
}

// stored reports whether the task is still in storage (not cancelled).
func (s *State) stored(rec *taskRecord) bool {
	_, ok := s.storage.lookup(rec.key())
	return ok
}

// runTask makes one run of a task: its attempts, with Retry's backoff, or
// for an Independent queue item one attempt and, if it fails, a retry on
// its own timer.
func (s *State) runTask(ctx context.Context, rec *taskRecord) {
	p, err := resolve(s.classDefaults(), rec.Retry.options())
	var r *retrier
	if err == nil {
		r, err = s.newRetrier(p, rec)
	}
	if err != nil { // the class's defaults changed since the task was made
		s.finish(ctx, rec, 0, err)
		return
	}
	attempt := func(ctx context.Context, n int) error {
		if !s.stored(rec) {
			return errTaskGone
		}
		s.event(rec.event(EventTaskRun, wire.Event{Attempt: n}))
		return s.host.Invoke(ctx, rec.Callback, rec.Payload)
	}
	if !rec.Independent {
		n, err := r.loop(ctx, attempt)
		s.finish(ctx, rec, n, err)
		return
	}
	n := rec.Attempts + 1
	if err := r.br.allow(s); err != nil {
		s.finish(ctx, rec, n-1, err)
		return
	}
	again, delay, err := r.step(ctx, n, attempt)
	if !again {
		s.finish(ctx, rec, n, err)
		return
	}
	if !s.stored(rec) { // the callback dequeued its own item
		s.finish(ctx, rec, n, errTaskGone)
		return
	}
	rec.Attempts, rec.Due = n, s.Now().Add(delay)
	if err := s.storage.Put(ctx, rec.key(), rec); err != nil {
		s.finish(ctx, rec, n, err)
		return
	}
	s.index(ctx).add(rec)
}

// finish ends a task's run: a one-shot task or a queue item is removed, a
// recurring task is scheduled again; after a failure the error is traced,
// dead-lettered if the task asked for it, and given to OnError.
func (s *State) finish(ctx context.Context, rec *taskRecord, attempts int, err error) {
	if errors.Is(err, errTaskGone) {
		s.event(rec.event(EventTaskDone, wire.Event{Note: "cancelled"}))
		return
	}
	if err != nil {
		s.event(rec.event(EventTaskError, wire.Event{Attempts: attempts, Err: err.Error()}))
		if rec.DeadLetter {
			s.deadLetter(ctx, rec, attempts, err)
		}
	}
	s.advance(ctx, rec)
	if err != nil {
		s.onError(ctx, &TaskError{Task: rec.task(), Attempts: attempts, Err: err})
	}
}

// advance removes a finished task, or schedules a recurring one again from
// what storage holds (the callback may have changed its copy of the payload).
func (s *State) advance(ctx context.Context, rec *taskRecord) {
	key := rec.key()
	if !s.stored(rec) {
		s.event(rec.event(EventTaskDone, wire.Event{Note: "cancelled"}))
		return
	}
	var next time.Time
	var err error
	switch rec.Kind {
	case TaskCron:
		next, err = cronNext(rec.Cron, s.Now())
	case TaskInterval:
		next = s.Now().Add(rec.Every)
	}
	var stored taskRecord
	if err == nil && !next.IsZero() {
		_, err = s.storage.Get(ctx, key, &stored)
	}
	if err != nil {
		s.event(rec.event(EventTaskError, wire.Event{Err: err.Error()}))
	}
	if next.IsZero() || err != nil {
		if _, err := s.storage.Delete(ctx, key); err != nil {
			s.event(rec.event(EventTaskError, wire.Event{Err: err.Error()}))
		}
		s.index(ctx).remove(rec.lane(), rec.Seq)
		s.event(rec.event(EventTaskDone, wire.Event{Note: "removed"}))
		return
	}
	stored.Due, stored.Attempts = next, 0
	if err := s.storage.Put(ctx, key, stored); err != nil {
		s.event(rec.event(EventTaskError, wire.Event{Err: err.Error()}))
		return
	}
	s.index(ctx).add(&stored)
	s.event(rec.event(EventTaskDone, wire.Event{Next: next}))
}
