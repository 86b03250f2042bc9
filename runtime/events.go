package runtime

import (
	"fmt"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
)

// Event is one entry of the runtime's typed event log: what alarms,
// object.Retry, scheduled and queued tasks and circuit breakers did. Kind
// is one of the object.Event* constants; the other fields are set by the
// kinds they belong to (zero otherwise), and Text writes them as a line of
// key=value pairs, as Trace and the timelines show them. Events are part of
// Trace, so the same seed gives the same events (rule D1).
type Event struct {
	At        time.Duration // virtual time since the runtime started
	Namespace string
	Object    string // the object's name, or its hex id
	Kind      string

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
	case object.EventAlarm:
		add("retry=%d", e.Retry)
	case object.EventAlarmGaveUp:
		add("retry=%d err=%q", e.Retry, e.Err)
	case object.EventAlarmRetry:
		add("retry=%d in=%v err=%q", e.Retry, e.Delay, e.Err)
	case object.EventRetry:
		task()
		add("attempt=%d delay=%v err=%q", e.Attempt, e.Delay, e.Err)
	case object.EventRetryGaveUp:
		task()
		add("attempt=%d reason=%s err=%q", e.Attempt, e.Reason, e.Err)
	case object.EventTaskRun:
		task()
		add("attempt=%d", e.Attempt)
	case object.EventTaskDone:
		task()
		if e.Note != "" {
			add("%s", e.Note)
		} else {
			add("next=%s", e.Next.Format(time.RFC3339Nano))
		}
	case object.EventDeadLetter:
		task()
		add("dead=%s", e.Dead)
	case object.EventRedrive:
		add("dead=%s", e.Dead)
		task()
	case EventReset:
		add("reason=%s message=%q", e.Reason, e.Err)
	case EventEvicted:
		add("idle=%v", e.Delay)
	case object.EventBreaker:
		add("name=%s state=%s", e.Name, e.State)
	case object.EventBreakerRefused:
		add("name=%s %s", e.Name, e.Note)
	case object.EventTaskError:
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

// Events returns every event recorded so far, in order.
func (r *Runtime) Events() []Event { return r.events.all() }

// eventLog keeps events in chunks of eventChunk, so that recording one
// never copies the ones before it (an Event is a few hundred bytes: a
// growing slice of them would move megabytes in a long run).
type eventLog struct {
	chunks [][]Event
	n      int
}

// The chunks start small and double up to eventChunk: a run with an event
// or two (an eviction) does not pay for 256.
const (
	eventChunk      = 256
	firstEventChunk = 4
)

func (l *eventLog) add(e Event) {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == cap(l.chunks[k-1]) {
		size := firstEventChunk
		if k > 0 {
			size = min(2*cap(l.chunks[k-1]), eventChunk)
		}
		l.chunks = append(l.chunks, make([]Event, 0, size))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, e)
	l.n++
}

// all returns a copy of the events, in order.
func (l *eventLog) all() []Event {
	out := make([]Event, 0, l.n)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	return out
}

// event records an event of the object h hosts.
func (h *host) event(w wire.Event) {
	r := h.ns.r
	e := Event{
		At: r.k.Now(), Namespace: h.ns.name, Object: h.target.Object, Kind: w.Kind,
		Task: w.Task, TaskKind: w.TaskKind, Callback: w.Callback,
		Lane: w.Lane, Key: w.Key, Name: w.Name, State: w.State, Note: w.Note, Dead: w.Dead,
		Attempt: w.Attempt, Attempts: w.Attempts, Retry: w.Retry, Reason: w.Reason,
		Delay: w.Delay, Next: w.Next, Err: w.Err, Panic: w.Panic,
	}
	r.events.add(e)
	if r.hist != nil || r.replay != nil {
		r.noteEvent(h, e)
	}
}

// Event records a trace event of the object.
func (v hostView) Event(e wire.Event) { v.h.event(e) }
