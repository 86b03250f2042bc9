package object

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Alarm delivery (rule O6), as workerd's alarm scheduler does it
// (src/workerd/server/alarm-scheduler.c++, real workerd 1.20261117.1): an
// alarm is delivered at most AlarmMaxRetries+1 times (RetryCount 0 to 5)
// when its handler keeps failing, a SQLite-backed object's
// AlarmMaxRetriesSQLite+1 times (RetryCount 0 to 6: real workerd
// 1.20261117.1 under localDisk storage, internal/platformtest's
// alarm-retry-all). The wait before a retry is
// AlarmRetryBase·2^k, where k counts the retries since the last one the
// infrastructure caused (see AlarmRetryWait). A delivery that failed
// because of the infrastructure (the object was reset while its handler
// ran) does not count against the retries: it keeps being retried, with k
// capped at AlarmBackoffCap (2 s·2^9, about 17 minutes), as the platform
// caps its backoff.
const (
	AlarmRetryBase        = 2 * time.Second
	AlarmMaxRetries       = 5
	AlarmMaxRetriesSQLite = 6
	AlarmBackoffCap       = 9
)

// AlarmRetries returns how many times a failing alarm of an object with
// backend b is retried before it is given up: AlarmMaxRetriesSQLite for a
// SQLite-backed object, AlarmMaxRetries for a key-value-backed one.
func AlarmRetries(b Backend) int {
	if b == KeyValueBacked {
		return AlarmMaxRetries
	}
	return AlarmMaxRetriesSQLite
}

// AlarmJitterDivisor bounds the jitter of a SQLite-backed object's alarm
// retry: up to AlarmRetryWait(k)/AlarmJitterDivisor (a quarter) more,
// drawn from the runtime's seed. workerd's alarm-scheduler.c++ adds up to
// 25% (RETRY_JITTER_FACTOR), and real workerd 1.20261117.1 does under
// localDisk storage, where a class is SQLite-backed (waits 0.2% to 24.6%
// longer); under inMemory storage, a key-value-backed class's, its waits
// are exact (2001, 4001, 8206, 16001 and 32001 ms, the 206 ms a stall of
// the process).
const AlarmJitterDivisor = 4

// AlarmRetryWait returns the wait before an alarm retry whose backoff
// index is k (from 0; capped at AlarmBackoffCap): AlarmRetryBase·2^k,
// before the jitter of a SQLite-backed object (AlarmJitterDivisor).
func AlarmRetryWait(k int) time.Duration {
	return AlarmRetryBase << min(max(k, 0), AlarmBackoffCap)
}

// ErrAlarm is wrapped by errors from SetAlarm, GetAlarm and DeleteAlarm.
var ErrAlarm = errors.New("alarm")

// AlarmInfo describes one delivery of an object's alarm.
type AlarmInfo struct {
	// RetryCount is how many deliveries of this alarm failed before,
	// not counting those the infrastructure failed (a reset of the object
	// during the delivery): 0 on the first delivery, up to
	// AlarmMaxRetries. It is the platform's alarmInfo.retryCount.
	RetryCount int
	// IsRetry reports whether RetryCount > 0 (the platform's
	// alarmInfo.isRetry).
	IsRetry bool
	// Scheduled is the virtual instant the delivery was due.
	Scheduled time.Time
}

// Alarmer is implemented by objects that handle their alarm. The runtime
// calls Alarm when virtual time reaches the instant set with
// State.SetAlarm, in a turn of its own that goes through the object's
// input gate like a request and builds the object if needed. An error or
// a panic fails the delivery, which is then retried (rule O6): delivery is
// at least once. A reset of the object while the handler runs fails the
// delivery too, as the infrastructure's failure: it is retried without
// counting against the retries.
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
// getAlarm does, not the retry's. During the Alarm handler it reports no
// alarm unless the handler has set a new one. After the last delivery of
// an alarm that kept failing, it still returns the instant the alarm was
// scheduled for, though the alarm will never fire again, until the object
// is reset or a SetAlarm or DeleteAlarm replaces it: so does the
// platform's getAlarm (real workerd 1.20261117.1).
func (s *State) GetAlarm(ctx context.Context) (time.Time, bool, error) {
	at, ok := s.host.Alarm()
	return at, ok, nil
}

// DeleteAlarm deletes the pending alarm, and any retry it waits for.
func (s *State) DeleteAlarm(ctx context.Context) error {
	s.host.SetAlarm(time.Time{}, false)
	return nil
}
