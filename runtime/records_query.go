package runtime

import (
	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/object"
)

// Match selects a run's records: Calls, Effects, Events and Turns each
// take Matches and return the records that match any of them (every
// record when given none). A record matches a Match when each field set
// in it is one the record has, with the same value; a field that a kind
// of record does not have (Method for an effect, Effect for a call) never
// matches that kind, so a query that asks the wrong kind returns nothing
// rather than everything. The last call to BOOTH.Book, and every email
// sent:
//
//	calls := rt.Calls(runtime.Match{Namespace: "BOOTH", Method: "Book"})
//	last := calls[len(calls)-1]
//	emails := rt.Effects(runtime.Match{Effect: "email"})
type Match struct {
	Namespace string // every record: the object's namespace
	Object    string // every record: the object's name, or its hex id
	// Method: a call's method ("fetch" for a Fetch); a turn's, the method
	// its call ran, or for a turn no call began, its kind ("alarm",
	// "schedule", "queue", "websocket").
	Method string
	Effect string           // an effect's kind, as given to object.State.Effect
	Event  object.EventKind // an event's kind
}

// where reports whether a record at namespace and object matches m's
// fields for them.
func (m Match) where(namespace, obj string) bool {
	return (m.Namespace == "" || m.Namespace == namespace) && (m.Object == "" || m.Object == obj)
}

// call reports whether a call or turn of method matches m.
func (m Match) call(namespace, obj, method string) bool {
	return m.where(namespace, obj) && (m.Method == "" || m.Method == method) && m.Effect == "" && m.Event == ""
}

func (m Match) effect(e *Effect) bool {
	return m.where(e.Namespace, e.Object) && m.Method == "" && (m.Effect == "" || m.Effect == e.Kind) && m.Event == ""
}

func (m Match) event(e *object.Event) bool {
	return m.where(e.Namespace, e.Object) && m.Method == "" && m.Effect == "" && (m.Event == "" || m.Event == e.Kind)
}

// anyOf reports whether one of ms matches, by test; no Match matches all.
func anyOf(ms []Match, test func(Match) bool) bool {
	if len(ms) == 0 {
		return true
	}
	for _, m := range ms {
		if test(m) {
			return true
		}
	}
	return false
}

// turnMethod is what Match.Method selects a turn by: its call's method,
// or the kind of a turn no call began.
func turnMethod(t *Turn) string {
	if t.Kind == TurnRequest {
		return t.Method
	}
	return t.Kind.String()
}

// room is where the records of n that match go: room for all of them
// without a Match (an empty slice, not nil, when there are none, as
// before Match); with one, nil for appending to, so that a query that
// selects a few of many records costs what it selects, and one that
// selects none is nil.
func room[T any](match []Match, n int) []T {
	if len(match) == 0 {
		return make([]T, 0, n)
	}
	return nil
}

// Calls returns the records kept (see WithRecords: only the last n under
// KeepLast(n)) of the calls that match (every call when given no Match),
// in the order they began, each its own copy. A call still in flight has
// Outcome transport.OutcomePending.
func (r *Runtime) Calls(match ...Match) []CallRecord {
	calls := r.kept()
	out := room[CallRecord](match, len(calls))
	for _, c := range calls {
		if anyOf(match, func(m Match) bool { return m.call(c.Site.Target.Namespace, c.Site.Target.Object, c.Site.Method) }) {
			out = append(out, record(c))
		}
	}
	return out
}

// Effects returns the side effects recorded (object.State.Effect) that
// match, in the order they were recorded, each with its own copy of the
// payload: the effects of attempts the platform would have run more than
// once appear once per run.
func (r *Runtime) Effects(match ...Match) []Effect { return r.effectsSince(0, match) }

// effectsSince is Effects of the effects recorded after the first i.
func (r *Runtime) effectsSince(i int, match []Match) []Effect {
	out := room[Effect](match, len(r.effects)-i)
	for _, e := range r.effects[i:] {
		if !anyOf(match, func(m Match) bool { return m.effect(&e) }) {
			continue
		}
		e.Payload, _, _ = clone.Copy(e.Payload, nil)
		out = append(out, e)
	}
	return out
}

// Events returns the events recorded so far that match (every event when
// given no Match), in order.
func (r *Runtime) Events(match ...Match) []object.Event {
	if len(match) == 0 {
		return r.events.all()
	}
	return r.events.matching(func(e *object.Event) bool {
		return anyOf(match, func(m Match) bool { return m.event(e) })
	})
}

// Turns returns the history of the object turns so far that match (every
// turn when given no Match), in the order the turns began (none without
// WithHistory): copies of History's. A turn that did nothing at all (a
// lane turn that found no work due) is left out.
func (r *Runtime) Turns(match ...Match) []Turn {
	turns := r.turns()
	out := room[Turn](match, len(turns))
	for _, t := range turns {
		if anyOf(match, func(m Match) bool { return m.call(t.Namespace, t.Object, turnMethod(t)) }) {
			out = append(out, *t)
		}
	}
	return out
}

// CallsTo returns the calls to method on objects of namespace (an empty
// name matches every one).
//
// Deprecated: use Calls with a Match, which also selects by object.
//
//go:fix inline
func (r *Runtime) CallsTo(namespace, method string) []CallRecord {
	return r.Calls(Match{Namespace: namespace, Method: method})
}

// EffectsOf returns the side effects of the given kind.
//
// Deprecated: use Effects with a Match, which also selects by object.
//
//go:fix inline
func (r *Runtime) EffectsOf(kind string) []Effect {
	return r.Effects(Match{Effect: kind})
}
