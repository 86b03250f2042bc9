package object

import (
	"context"
	"fmt"
	"time"
)

// The alarm is storage's, as on the platform (ctx.storage.setAlarm): a
// transaction can set, read and delete it, and rolls it back with its
// other writes (rule L8); DeleteAll deletes it with the keys.

// alarmOp is a transaction's pending change of the alarm: set to at, or
// deleted (at zero).
type alarmOp struct {
	at time.Time
}

// SetAlarm sets the object's alarm to at, as State.SetAlarm does; in a
// transaction, when the transaction commits.
func (s *Storage) SetAlarm(ctx context.Context, at time.Time) error {
	if err := s.live("SetAlarm"); err != nil {
		return err
	}
	if at.IsZero() {
		return fmt.Errorf("object.Storage.SetAlarm: %w: the time is zero (use DeleteAlarm to delete the alarm)", ErrAlarm)
	}
	h := s.alarmHost()
	if h == nil {
		return fmt.Errorf("object.Storage.SetAlarm: %w: the storage is not an object's (NewStorage): it has no alarm", ErrAlarm)
	}
	if inst, err := h.Instance(); err == nil && inst != nil {
		if _, ok := inst.(Alarmer); !ok {
			return fmt.Errorf("object.Storage.SetAlarm: %w: %T has no Alarm(ctx, object.AlarmInfo) error method", ErrAlarm, inst)
		}
	}
	if s.txn != nil {
		s.txn.alarm = &alarmOp{at: at}
		return nil
	}
	h.SetAlarm(at, true)
	return nil
}

// GetAlarm returns the pending alarm, as State.GetAlarm does; in a
// transaction, as the transaction leaves it.
func (s *Storage) GetAlarm(ctx context.Context) (time.Time, bool, error) {
	if err := s.live("GetAlarm"); err != nil {
		return time.Time{}, false, err
	}
	for t := s; t.txn != nil; t = t.txn.parent {
		if op := t.txn.alarm; op != nil {
			return op.at, !op.at.IsZero(), nil
		}
	}
	h := s.alarmHost()
	if h == nil {
		return time.Time{}, false, nil
	}
	at, ok := h.Alarm()
	return at, ok, nil
}

// DeleteAlarm deletes the pending alarm, as State.DeleteAlarm does; in a
// transaction, when the transaction commits.
func (s *Storage) DeleteAlarm(ctx context.Context) error {
	if err := s.live("DeleteAlarm"); err != nil {
		return err
	}
	if s.txn != nil {
		s.txn.alarm = &alarmOp{}
		return nil
	}
	if h := s.alarmHost(); h != nil {
		h.SetAlarm(time.Time{}, false)
	}
	return nil
}

// alarmHost is the host that keeps the object's alarm: the outermost
// storage's (nil for a storage of no object).
func (s *Storage) alarmHost() Host {
	for s.txn != nil {
		s = s.txn.parent
	}
	return s.host
}

// commitAlarm applies a committed transaction's change of the alarm to s,
// its parent: a pending change of s's own transaction, or the alarm.
func (s *Storage) commitAlarm(op *alarmOp) {
	if op == nil {
		return
	}
	if s.txn != nil {
		s.txn.alarm = op
		return
	}
	if h := s.host; h != nil {
		h.SetAlarm(op.at, !op.at.IsZero())
	}
}
