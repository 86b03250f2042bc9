package object

import (
	"fmt"
	"strings"
	"time"
)

// EventKind is the kind of a trace event the runtime records for alarms,
// retries, tasks, WebSockets and the object's life (see Event): one of the
// Event* constants. Each kind sets the event's fields it names; Event.Text
// writes them as a line of key=value pairs, with errors quoted.
type EventKind string

// The kinds of events.
const (
	// EventAlarm: the alarm is delivered ("retry=0").
	EventAlarm EventKind = "alarm"
	// EventAlarmRetry: a delivery failed and is retried ("retry=1 at=2s err=...").
	EventAlarmRetry EventKind = "alarm.retry"
	// EventAlarmGaveUp: the last retry failed; the alarm is dropped.
	EventAlarmGaveUp EventKind = "alarm.gave-up"
	// EventRetry: an attempt failed and another follows after delay
	// ("attempt=1 delay=57ms err=..."), from Retry or from a task.
	EventRetry EventKind = "retry"
	// EventRetryGaveUp: the last attempt failed (attempts used up, or
	// ShouldRetry said no).
	EventRetryGaveUp EventKind = "retry.gave-up"
	// EventBreaker: a circuit breaker changed state ("name=x state=open").
	EventBreaker EventKind = "breaker"
	// EventBreakerRefused: a circuit breaker refused an attempt.
	EventBreakerRefused EventKind = "breaker.refused"
	// EventTaskRun: an attempt of a scheduled or queued task starts.
	EventTaskRun EventKind = "task.run"
	// EventTaskDone: a task's run ended, and the task was removed or
	// rescheduled ("next=...").
	EventTaskDone EventKind = "task.done"
	// EventTaskError: a task's attempts ran out; the error goes to OnError.
	EventTaskError EventKind = "task.error"
	// EventDeadLetter: an exhausted task was kept in the dead-letter store.
	EventDeadLetter EventKind = "task.dead-letter"
	// EventRedrive: a dead letter was sent back to run again.
	EventRedrive EventKind = "task.redrive"
	// EventReset: the object was reset (rule L3); Event.Reason names why.
	EventReset EventKind = "reset"
	// EventEvicted: the object was evicted after Event.Delay of idleness (rule L5).
	EventEvicted EventKind = "evicted"
	// EventWebSocketAccept: the object accepted a WebSocket (Name) with
	// tags (Note) (rule W1).
	EventWebSocketAccept EventKind = "websocket.accept"
	// EventWebSocketMessage: a client's message (Note) reached the
	// object's handler (rule W2); Err when the handler failed.
	EventWebSocketMessage EventKind = "websocket.message"
	// EventWebSocketClose: a socket closed, by the object or after the
	// client's close reached the handler; Note has the code, Reason the
	// reason.
	EventWebSocketClose EventKind = "websocket.close"
	// EventWebSocketError: the object's handler of a socket's event failed
	// (Err), or the object could not be built for it.
	EventWebSocketError EventKind = "websocket.error"
	// EventWebSocketDrop: the fault drop-connection dropped a socket's
	// connection as a message was sent (Note: the way it was going, to the
	// object or to the client) (rule W5).
	EventWebSocketDrop EventKind = "websocket.drop"
)

// Event is one entry of the runtime's typed event log: what alarms,
// agent.Retry, scheduled and queued tasks and circuit breakers did. Kind
// is one of the Event* constants; the other fields are set by the
// kinds they belong to (zero otherwise), and Text writes them as a line of
// key=value pairs, as Trace and the timelines show them. Events are part of
// Trace, so the same seed gives the same events (rule D1).
type Event struct {
	// Where and when: set by the runtime as it records the event (object
	// code leaves them zero).
	At        time.Duration // virtual time since the runtime started
	Namespace string
	Object    string // the object's name, or its hex id
	Kind      EventKind

	// The task the event is about: its id, kind (delayed, at, cron,
	// every, queue) and callback; all three set or none.
	Task, TaskKind, Callback string
	Lane                     string        // task.error: the lane whose object could not be built
	Key                      string        // task.error: the storage key that could not be read
	Name                     string        // breaker, breaker.refused: the breaker's name
	State                    string        // breaker: its new state
	Note                     string        // one word: task.done cancelled or removed; task.error dead-letter or index; breaker.refused why
	Dead                     string        // task.dead-letter, task.redrive: the dead letter's id
	Attempt                  int           // retry, retry.gave-up, task.run: the attempt, from 1
	Attempts                 int           // task.error: attempts made in the task's run
	Retry                    int           // alarm, alarm.retry, alarm.gave-up: the alarm's retry count
	Reason                   string        // retry.gave-up: attempts-used-up or should-retry-false
	Delay                    time.Duration // retry, alarm.retry, task.error: until the next try
	Next                     time.Time     // task.done: when a repeating task runs next
	Err                      string        // the error, for the kinds that have one
	Panic                    string        // task.error: what OnError panicked with
}

// Text writes the event's fields as Trace shows them after the kind, a
// line of key=value pairs, e.g. "task=s1 kind=delayed callback=Tick
// attempt=1".
func (e Event) Text() string {
	var b strings.Builder
	add := func(format string, args ...any) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, format, args...)
	}
	task := func() {
		if e.Task != "" {
			add("task=%s kind=%s callback=%s", e.Task, e.TaskKind, e.Callback)
		}
	}
	switch e.Kind {
	case EventAlarm:
		add("retry=%d", e.Retry)
	case EventAlarmGaveUp:
		add("retry=%d err=%q", e.Retry, e.Err)
	case EventAlarmRetry:
		add("retry=%d in=%v err=%q", e.Retry, e.Delay, e.Err)
	case EventRetry:
		task()
		add("attempt=%d delay=%v err=%q", e.Attempt, e.Delay, e.Err)
	case EventRetryGaveUp:
		task()
		add("attempt=%d reason=%s err=%q", e.Attempt, e.Reason, e.Err)
	case EventTaskRun:
		task()
		add("attempt=%d", e.Attempt)
	case EventTaskDone:
		task()
		if e.Note != "" {
			add("%s", e.Note)
		} else {
			add("next=%s", e.Next.Format(time.RFC3339Nano))
		}
	case EventDeadLetter:
		task()
		add("dead=%s", e.Dead)
	case EventRedrive:
		add("dead=%s", e.Dead)
		task()
	case EventReset:
		add("reason=%s message=%q", e.Reason, e.Err)
	case EventEvicted:
		add("idle=%v", e.Delay)
	case EventWebSocketAccept, EventWebSocketMessage, EventWebSocketClose, EventWebSocketError, EventWebSocketDrop:
		e.socketText(add)
	case EventBreaker:
		add("name=%s state=%s", e.Name, e.State)
	case EventBreakerRefused:
		add("name=%s %s", e.Name, e.Note)
	case EventTaskError:
		if e.Panic != "" {
			add("OnError panicked: %s", e.Panic)
			break
		}
		if e.Lane != "" {
			add("lane=%s retry-in=%v", e.Lane, e.Delay)
		}
		task()
		if e.Key != "" {
			add("key=%s", e.Key)
		}
		if e.Note != "" {
			add("%s", e.Note)
		}
		if e.Attempts != 0 {
			add("attempts=%d", e.Attempts)
		}
		add("err=%q", e.Err)
	}
	return b.String()
}

// socketText writes a WebSocket event's fields: the socket, its note (the
// tags, the message, the close code), the close reason, the error.
func (e Event) socketText(add func(format string, args ...any)) {
	add("socket=%s", e.Name)
	if e.Note != "" {
		add("%s", e.Note)
	}
	if e.Kind == EventWebSocketClose {
		add("reason=%q", e.Reason)
	}
	if e.Err != "" {
		add("err=%q", e.Err)
	}
}
