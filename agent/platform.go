package agent

import (
	"context"
	"errors"
	"reflect"
	"strings"

	"github.com/dosim/dosim/internal/errchain"
	"github.com/dosim/dosim/object"
)

// The Agents SDK's schedule and queue runner tells a failure of the
// platform from one of the callback's own (rules A3, A6), by the
// classifier of its retries module (the agents repo's
// packages/agents/src/retries.ts: isDurableObjectCodeUpdateReset,
// isDurableObjectMemoryLimitReset, isPlatformTransientError, and the
// runner's isPlatformFailure). These are the platform's words it looks for,
// in the error and in every error it wraps, case aside.
const (
	msgCodeUpdate     = "reset because its code was updated"
	msgScriptUpgraded = "this script has been upgraded"
	msgMemoryLimit    = "exceeded its memory limit"
	msgConnectionLost = "network connection lost"
	msgStorageReset   = "internal error in durable object storage caused object to be reset"
	msgOverloaded     = "durable object is overloaded"
)

// maxCauses bounds the walk down an error's chain, as the SDK's
// selfAndCauses does (a cyclic chain cannot spin).
const maxCauses = 8

// causes calls fn on err and on the errors it wraps, depth first, at most
// maxCauses of them, until fn returns true; it reports whether one did.
func causes(err error, fn func(error) bool) bool { return errchain.WalkAtMost(err, maxCauses, fn) }

// says reports whether the message of err or of an error it wraps holds
// one of the phrases (lower case).
func says(err error, phrases ...string) bool {
	return causes(err, func(e error) bool {
		msg := strings.ToLower(errText(e))
		for _, p := range phrases {
			if strings.Contains(msg, p) {
				return true
			}
		}
		return false
	})
}

// errText is e's message; an Error method that panics reads as none.
func errText(e error) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return e.Error()
}

// stopsRetries reports whether err ends a task's attempts at once, before
// its attempts are used up: a code-update reset or a memory-limit reset,
// where another attempt in the same invocation is futile (the SDK: "code
// never reloads mid-invocation"; a memory-limit reset re-runs into the
// limit). A stale instance's storage refusal (object.ErrInstanceReset: the
// object was reset under the callback) is of the same kind here: every
// later attempt on that instance fails the same way.
func stopsRetries(err error) bool {
	return errors.Is(err, object.ErrInstanceReset) || says(err, msgCodeUpdate, msgScriptUpgraded, msgMemoryLimit)
}

// flag reports whether e is a struct, or a pointer to one, with a bool
// field called name that is true: the SDK reads an error's properties
// (err.retryable, err.overloaded, err.durableObjectReset) whatever its
// class, and so does this, for a *stub.Error's flags and for a user's own
// error type that carries the same (package agent sits below package
// stub and does not import it).
func flag(e error, name string) bool {
	v := reflect.ValueOf(e)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return false
	}
	f := v.FieldByName(name)
	return f.IsValid() && f.Kind() == reflect.Bool && f.Bool()
}

// platformFailure reports whether err looks like the platform's failure
// rather than the callback's own: a reset (flagged DurableObjectReset, or
// in the platform's words: a code update, the storage, the memory limit),
// an overloaded object (flagged, or "Durable Object is overloaded."),
// "Network connection lost.", or an error the platform flags retryable
// (fields of those names: see flag). Such a
// failure is not handed to OnError: the task is kept and runs again in a
// fresh invocation (turn.deferRun).
func platformFailure(err error) bool {
	if errors.Is(err, object.ErrInstanceReset) {
		return true
	}
	flagged := causes(err, func(e error) bool {
		return flag(e, "DurableObjectReset") || flag(e, "Overloaded") || flag(e, "Retryable")
	})
	return flagged || says(err, msgCodeUpdate, msgScriptUpgraded, msgMemoryLimit, msgConnectionLost, msgStorageReset, msgOverloaded)
}

// deferrable reports whether a failed run of rec may be deferred to a
// fresh invocation: a one-shot schedule or a queue item. A recurring
// schedule is not: its error goes to OnError and it runs again at its next
// time, as in the SDK (its runner defers one-shot rows only).
func (r *taskRecord) deferrable() bool {
	return r.Kind != TaskCron && r.Kind != TaskInterval
}

// deferRun ends a run of rec that failed with the platform's failure err
// after attempts attempts: no OnError, no dead letter; the task is kept
// and runs again, from its first attempt, object.AlarmRetryBase later (the
// wait of the platform's first alarm retry, as the SDK rethrows to the
// alarm). Until then a task that is not Independent holds its lane, as
// the SDK's rethrown alarm holds the tasks behind it.
func (s *turn) deferRun(ctx context.Context, rec *taskRecord, attempts int, err error) {
	at := s.Now().Add(object.AlarmRetryBase)
	s.event(rec.event(object.EventRetry, object.Event{Attempt: attempts, Delay: object.AlarmRetryBase,
		Note: "deferred: a platform failure", Err: err.Error()}))
	if rec.Independent {
		rec.Attempts, rec.Due = 0, at
		if perr := s.storage.Put(ctx, rec.key(), rec); perr != nil {
			s.finish(ctx, rec, attempts, perr)
			return
		}
		s.index(ctx).add(rec)
		return
	}
	if perr := s.storage.Put(ctx, retryKey(rec.lane(), rec.Seq), retrying{Attempt: 0, At: at, LastErr: err.Error()}); perr != nil {
		s.finish(ctx, rec, attempts, perr)
		return
	}
	s.index(ctx).block(rec.lane(), rec.Seq, at)
}
