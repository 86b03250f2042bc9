package object

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Alarm delivery (rule O6): a failing Alarm handler is retried after
// AlarmRetryBase, doubling each time (2 s, 4 s, 8 s, ...), at most
// AlarmMaxRetries times; then the alarm is given up.
const (
	AlarmRetryBase  = 2 * time.Second
	AlarmMaxRetries = 6
)

// ErrAlarm is wrapped by errors from SetAlarm, GetAlarm and DeleteAlarm.
var ErrAlarm = errors.New("alarm")

// AlarmInfo describes one delivery of an object's alarm.
type AlarmInfo struct {
	// RetryCount is how many times this alarm has been delivered before
	// and failed: 0 on the first delivery, up to AlarmMaxRetries.
	RetryCount int
	// IsRetry reports whether RetryCount > 0.
	IsRetry bool
	// Scheduled is the virtual instant the delivery was due.
	Scheduled time.Time
}

// Alarmer is implemented by objects that handle their alarm. The runtime
// calls Alarm when virtual time reaches the instant set with
// State.SetAlarm, in a turn of its own that goes through the object's
// input gate like a request and builds the object if needed. An error or
// a panic fails the delivery, which is then retried (rule O6): delivery is
// at least once.
type Alarmer interface {
	Alarm(ctx context.Context, info AlarmInfo) error
}

// SetAlarm sets the object's one alarm to at, replacing any pending one
// (rule O6). An instant already past fires as soon as the object's other
// work allows. The alarm is kept by the runtime, not by the instance: it
// survives an object reset. Alarms are background events: they fire when
// virtual time reaches them (Runtime.Advance, or while something else
// sleeps), and never keep Runtime.Run from returning.
//
// The object must implement Alarmer.
func (s *State) SetAlarm(ctx context.Context, at time.Time) error {
	if at.IsZero() {
		return fmt.Errorf("object.State.SetAlarm: %w: the time is zero (use DeleteAlarm to delete the alarm)", ErrAlarm)
	}
	if inst, err := s.host.Instance(); err == nil && inst != nil {
		if _, ok := inst.(Alarmer); !ok {
			return fmt.Errorf("object.State.SetAlarm: %w: %T has no Alarm(ctx, object.AlarmInfo) error method", ErrAlarm, inst)
		}
	}
	s.host.SetAlarm(at, true)
	return nil
}

// GetAlarm returns the instant of the pending alarm and true, or false when
// no alarm is set. While a failed delivery waits for its retry, it returns
// the instant the alarm was first scheduled for, as the platform's
// getAlarm does, not the retry's. During the Alarm handler it reports no alarm unless
// the handler has set a new one.
func (s *State) GetAlarm(ctx context.Context) (time.Time, bool, error) {
	at, ok := s.host.Alarm()
	return at, ok, nil
}

// DeleteAlarm deletes the pending alarm, and any retry it waits for.
func (s *State) DeleteAlarm(ctx context.Context) error {
	s.host.SetAlarm(time.Time{}, false)
	return nil
}
