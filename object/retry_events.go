package object

import "github.com/dosim/dosim/internal/wire"

// Kinds of the trace events the runtime records for alarms, retries and
// tasks (see runtime.Event). Each kind sets the event's fields it names;
// runtime.Event.Text writes them as a line of key=value pairs, with errors
// quoted.
const (
	// EventAlarm: the alarm is delivered ("retry=0").
	EventAlarm = "alarm"
	// EventAlarmRetry: a delivery failed and is retried ("retry=1 at=2s err=...").
	EventAlarmRetry = "alarm.retry"
	// EventAlarmGaveUp: the last retry failed; the alarm is dropped.
	EventAlarmGaveUp = "alarm.gave-up"
	// EventRetry: an attempt failed and another follows after delay
	// ("attempt=1 delay=57ms err=..."), from Retry or from a task.
	EventRetry = "retry"
	// EventRetryGaveUp: the last attempt failed (attempts used up, or
	// ShouldRetry said no).
	EventRetryGaveUp = "retry.gave-up"
	// EventBreaker: a circuit breaker changed state ("name=x state=open").
	EventBreaker = "breaker"
	// EventBreakerRefused: a circuit breaker refused an attempt.
	EventBreakerRefused = "breaker.refused"
	// EventTaskRun: an attempt of a scheduled or queued task starts.
	EventTaskRun = "task.run"
	// EventTaskDone: a task's run ended, and the task was removed or
	// rescheduled ("next=...").
	EventTaskDone = "task.done"
	// EventTaskError: a task's attempts ran out; the error goes to OnError.
	EventTaskError = "task.error"
	// EventDeadLetter: an exhausted task was kept in the dead-letter store.
	EventDeadLetter = "task.dead-letter"
	// EventRedrive: a dead letter was sent back to run again.
	EventRedrive = "task.redrive"
)

// event records a trace event attributed to the object.
func (s *State) event(e wire.Event) { s.host.Event(e) }
