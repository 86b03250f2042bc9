package runtime

import (
	"github.com/dosim/dosim/internal/fields"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/object"
)

// What a turn computed as it ran (WithHistory): the state it began in and
// what it left, answered and recorded. A replay of the turn from that
// state, with its reads, computes the same (rule C1), so the checker,
// stepping from that state, takes the run's own outcome instead of
// replaying the turn: most of a history's steps are the run's own, in the
// order it ran them.
//
// The runtime keeps an outcome where a replay costs more than the states
// it takes (two a turn at most, one when the turn follows another): for a
// background turn (an alarm, a run of tasks), and for a request to an
// object that keeps an SQL database or makes one (an empty state costs
// nothing to take), or that runs tasks (an agent, whose requests queue
// them). A request to any other key-value object replays cheaply, and
// its steps repeat from seed to seed, which the model memoises.
//
// It keeps one only for a turn whose replay from its state a fresh
// instance makes alone: a turn that ran to its end without waiting (no
// awaits, no calls out), read no runtime-wide state and held no
// WebSocket, on an instance that keeps nothing in its fields (fields.Text
// is "", as Replayed.Memory says) and whose constructor wrote nothing;
// for a request, only when it answered (not an error); for an alarm, only
// its first delivery; and none while a failed delivery waits for its
// retry (alarmHidden) or for a turn that ran a statement that may read
// the SQL connection's own counts (changes(), last_insert_rowid()): a
// state holds neither. The checker takes it only when the turn was not
// cut short after all (Turn.Cut: a write lost later cuts it).

// outcome is a turn's outcome, as the history keeps it.
type outcome struct {
	before *ObjectState
	after  Replayed
}

// outcomeStart is what a turn's log keeps, as the turn runs, of its
// outcome to come.
type outcomeStart struct {
	// before is the state the turn began in: the last turn's after state
	// when nothing was written since (lastState); nil: no outcome.
	before *ObjectState
	// effects is where the runtime's effects stood as the turn began.
	effects int
	inst    int    // the instance it began on (0: none built yet)
	conn    uint64 // the storage's ConnectionReads as it began
}

// emptyState is the state of an object that holds nothing: the state
// most objects' first turn begins in, taken for nothing. Shared: never
// changed.
var emptyState ObjectState

// sealKey is seal.Key: Outcome's parameter, which only dosim's packages
// can make (as object.Hosting's).
type sealKey = seal.Key

// Outcome returns what turn t computed as it ran, from the state before
// it began in, when the runtime kept it (see above): nil, nil otherwise.
// Only dosim's own checker calls it: its first parameter's type is
// internal to dosim. Both are the history's own, to read, not to change.
func Outcome(_ sealKey, t *Turn) (before *ObjectState, after *Replayed) {
	o := t.outcome
	if o == nil || t.Cut != "" {
		return nil, nil
	}
	return o.before, &o.after
}

// beginOutcome starts the outcome of turn tl of h, when it may keep one.
func (h *host) beginOutcome(tl *turnLog) {
	if tl.Kind == TurnRequest && !h.storage.HasSQL() && h.storage.Len() > 0 && !runsTasks(h.inst) {
		return // a replay of it costs less than the states it would take
	}
	if h.ws != nil || h.ctorWrote || h.alarmHidden() || (h.inst != nil && !fields.Empty(h.inst)) {
		return
	}
	n := 0
	if h.inst != nil {
		n = h.instances
	}
	before := &emptyState
	if h.storage.HasSQL() || h.storage.Len() > 0 || h.alarm.set || h.alarm.gaveUp != nil {
		before = h.lastState()
	}
	tl.ob = outcomeStart{before: before, effects: len(h.ns.r.effects), inst: n,
		conn: object.Hosting(seal.Key{}).ConnectionReads(h.storage)}
}

// alarmHidden reports whether h's alarm holds what its state does not: a
// failed delivery waiting for its retry remembers when the alarm was
// first due and what a SetAlarm since asked for, which GetAlarm shows
// and a replay, restoring the state, cannot know.
func (h *host) alarmHidden() bool {
	return h.alarm.waiting || h.alarm.shownSet || h.alarm.gaveUp != nil
}

// lastState is h's state now for an outcome: the one it took last when
// nothing was written since and the alarm is as it was, so that a turn
// that follows another begins in the state the other left, the same
// value (which the checker reads once). Its entries are the storage's own
// values (SnapshotToRead): the checker only reads them. An outcome is
// kept only where the object holds no WebSocket (beginOutcome).
func (h *host) lastState() *ObjectState {
	a := h.alarmState()
	gen := object.Hosting(seal.Key{}).Generation(h.storage)
	if l := &h.last; l.st != nil && l.gen == gen && l.alarm == a {
		return l.st
	}
	st := ObjectState{Storage: object.Hosting(seal.Key{}).SnapshotToRead(h.storage), Alarm: a}
	h.last = lastState{st: &st, gen: gen, alarm: a}
	return &st
}

// lastState is the state an outcome took last, with its storage's
// generation (object's Hosting.Generation) and its alarm then.
type lastState struct {
	st    *ObjectState
	gen   uint64
	alarm AlarmState
}

// endOutcome finishes turn tl's outcome as it ends, or drops it when the
// turn went where a replay alone cannot follow.
func (h *host) endOutcome(tl *turnLog) {
	ob := tl.ob
	if ob.before == nil {
		return
	}
	tl.ob = outcomeStart{}
	switch {
	case len(tl.Awaits) > 0 || len(tl.calls) > 0 || tl.Shared || tl.Cut != "" || tl.Kind == TurnWebSocket:
		return
	case h.ws != nil || h.inst == nil || h.ctorWrote || (ob.inst != 0 && ob.inst != h.instances):
		return // a socket, a reset, a new instance under it
	case h.alarmHidden() || object.Hosting(seal.Key{}).ConnectionReads(h.storage) != ob.conn:
		return // it may have read what the state does not hold
	case tl.Alarm != nil && (tl.Alarm.Retry > 0 || tl.Alarm.Backoff > 0 || tl.Alarm.Infra):
		return // a retry's wait depends on the first delivery's instant, which a state does not hold
	case tl.Fetch != nil && tl.Fetch.BodyErr != "":
		return
	case tl.Kind == TurnRequest && !h.storage.HasSQL() && !runsTasks(h.inst):
		return // began empty, as an object's first turn does, and made no database
	case !fields.Empty(h.inst):
		return
	}
	r := h.ns.r
	o := &outcome{before: ob.before}
	o.after = Replayed{State: *h.lastState(), Events: tl.Events[:len(tl.Events):len(tl.Events)], Exact: true}
	for _, e := range r.effects[ob.effects:] {
		if e.Namespace == h.ns.name && e.Object == h.target.Object {
			o.after.Effects = append(o.after.Effects, e)
		}
	}
	if x := tl.Fetch; x != nil {
		o.after.Fetch = &FetchExchange{Status: x.Status, RespHeader: x.RespHeader, RespBody: x.RespBody}
	}
	if tl.Kind == TurnRequest {
		tl.pending = o // kept once its answer is known (answered)
		return
	}
	tl.Turn.outcome = o
}

// answered keeps the outcome of request turn tl, whose method answered v
// (a copy, as its caller gets it; nil for a fetch, whose response the
// outcome holds), or drops it for an error.
func answered(tl *turnLog, v any, err error) {
	if tl == nil || tl.pending == nil {
		return
	}
	o := tl.pending
	tl.pending = nil
	if err == nil {
		o.after.Value = v
		tl.Turn.outcome = o
	}
}

// runsTasks reports whether inst runs background tasks (an agent): its
// requests queue them, and the lane turns that run them keep outcomes.
func runsTasks(inst any) bool {
	_, ok := inst.(object.TaskRunner)
	return ok
}
