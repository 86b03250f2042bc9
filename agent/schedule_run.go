package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/object"

	"github.com/dosim/dosim/internal/wire"
)

// runLane runs the lane's due tasks one at a time, in (due, creation)
// order, then reports when the lane is next due. The host calls it in a
// turn that holds the object's input gate. Each task makes one attempt
// per lane turn (runTask): the turn never sleeps.
func (s *turn) runLane(ctx context.Context, lane wire.Lane) {
	for {
		rec, rt, ok := s.popDue(ctx, lane)
		if !ok {
			break
		}
		s.runTask(ctx, rec, rt)
	}
	s.reportDue(ctx, lane)
}

// popDue takes the earliest due task of lane out of the index and reads it
// from storage, with its run's retrying when it holds the lane.
func (s *turn) popDue(ctx context.Context, lane wire.Lane) (*taskRecord, *retrying, bool) {
	for {
		idx := s.index(ctx)
		e, ok := idx.peek(lane)
		if !ok || e.due.After(s.Now()) {
			return nil, nil, false
		}
		b, blocking := idx.blocked(lane)
		idx.remove(lane, e.seq)
		var rec taskRecord
		key := taskKey(lane, e.seq)
		if found, err := s.storage.Get(ctx, key, &rec); err != nil || !found {
			if err != nil {
				s.event(object.Event{Kind: object.EventTaskError, Key: key, Err: err.Error()})
			}
			continue
		}
		if !blocking || b != e.seq {
			return &rec, nil, true
		}
		var rt retrying
		if found, err := s.storage.Get(ctx, retryKey(lane, e.seq), &rt); err != nil || !found {
			if err != nil {
				s.event(object.Event{Kind: object.EventTaskError, Key: retryKey(lane, e.seq), Err: err.Error()})
			}
			return &rec, nil, true // start the run again
		}
		return &rec, &rt, true
	}
}

// stored reports whether the task is still in storage (not cancelled).
func (s *turn) stored(rec *taskRecord) bool {
	return object.Hosting(seal.Key{}).Has(s.storage, rec.key())
}

// runTask makes one attempt of a task's run (rt: the run so far, nil for
// its first attempt), in the lane turn that popped it. A failed attempt
// with attempts left is followed by a later lane turn at the time Retry's
// backoff says (rule A2), not by a sleep: no lane turn sleeps, so each is
// one atomic step of the object's history (rule C2). Until then a task
// that is not Independent holds its lane, as the Agents SDK's sequential
// flush does; an Independent queue item keeps its place and the items
// behind it run meanwhile (rule A7).
func (s *turn) runTask(ctx context.Context, rec *taskRecord, rt *retrying) {
	p, err := resolve(s.classDefaults(), rec.Retry.options())
	var r *retrier
	if err == nil {
		r, err = s.newRetrier(p, rec)
	}
	if err != nil { // the class's defaults changed since the task was made
		s.finishRun(ctx, rec, rt, 0, err)
		return
	}
	attempt := func(ctx context.Context, n int) error {
		if !s.stored(rec) {
			return errTaskGone
		}
		s.event(rec.event(object.EventTaskRun, object.Event{Attempt: n}))
		return s.host.Invoke(ctx, rec.Callback, rec.Payload)
	}
	n, last := rec.Attempts+1, ""
	if rt != nil {
		n, last = rt.Attempt+1, rt.LastErr
	}
	if err := r.br.allow(s); err != nil {
		if last != "" {
			err = fmt.Errorf("%w (last error: %s)", err, last)
		}
		s.finishRun(ctx, rec, rt, n-1, err)
		return
	}
	again, delay, err := r.step(ctx, n, attempt)
	if !again {
		if err != nil && !errors.Is(err, errTaskGone) && rec.deferrable() && platformFailure(err) && s.stored(rec) {
			s.deferRun(ctx, rec, n, err) // the platform's failure, not the callback's (rules A3, A6)
			return
		}
		s.finishRun(ctx, rec, rt, n, err)
		return
	}
	if !s.stored(rec) { // the callback dequeued its own item
		s.finishRun(ctx, rec, rt, n, errTaskGone)
		return
	}
	at := s.Now().Add(delay)
	if rec.Independent {
		rec.Attempts, rec.Due = n, at
		if err := s.storage.Put(ctx, rec.key(), rec); err != nil {
			s.finish(ctx, rec, n, err)
			return
		}
		s.index(ctx).add(rec)
		return
	}
	if err := s.storage.Put(ctx, retryKey(rec.lane(), rec.Seq), retrying{Attempt: n, At: at, LastErr: err.Error()}); err != nil {
		s.finishRun(ctx, rec, rt, n, err)
		return
	}
	s.index(ctx).block(rec.lane(), rec.Seq, at)
}

// finishRun is finish for a run that may hold its lane: its retrying goes.
func (s *turn) finishRun(ctx context.Context, rec *taskRecord, rt *retrying, attempts int, err error) {
	if rt != nil {
		if _, derr := s.storage.Delete(ctx, retryKey(rec.lane(), rec.Seq)); derr != nil {
			s.event(rec.event(object.EventTaskError, object.Event{Err: derr.Error()}))
		}
	}
	s.finish(ctx, rec, attempts, err)
}

// finish ends a task's run: a one-shot task or a queue item is removed, a
// recurring task is scheduled again; after a failure the error is traced,
// dead-lettered if the task asked for it, and given to OnError.
func (s *turn) finish(ctx context.Context, rec *taskRecord, attempts int, err error) {
	if errors.Is(err, errTaskGone) {
		s.event(rec.event(object.EventTaskDone, object.Event{Note: "cancelled"}))
		return
	}
	if err != nil {
		s.event(rec.event(object.EventTaskError, object.Event{Attempts: attempts, Err: err.Error()}))
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
func (s *turn) advance(ctx context.Context, rec *taskRecord) {
	key := rec.key()
	if !s.stored(rec) {
		s.event(rec.event(object.EventTaskDone, object.Event{Note: "cancelled"}))
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
		s.event(rec.event(object.EventTaskError, object.Event{Err: err.Error()}))
	}
	if next.IsZero() || err != nil {
		if _, err := s.storage.Delete(ctx, key); err != nil {
			s.event(rec.event(object.EventTaskError, object.Event{Err: err.Error()}))
		}
		s.index(ctx).remove(rec.lane(), rec.Seq)
		s.event(rec.event(object.EventTaskDone, object.Event{Note: "removed"}))
		return
	}
	stored.Due, stored.Attempts = next, 0
	if err := s.storage.Put(ctx, key, stored); err != nil {
		s.event(rec.event(object.EventTaskError, object.Event{Err: err.Error()}))
		return
	}
	s.index(ctx).add(&stored)
	s.event(rec.event(object.EventTaskDone, object.Event{Next: next}))
}
