package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/fields"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
)

// Replaying one turn alone (rule C1): a checker that asks what an object's
// class computes, one turn at a time, runs the turn from a state of its
// choosing on a fresh instance, at the instant the turn ran, and feeds it
// the clock readings, seeded draws and answers of calls out the turn read
// as it ran (Turn.Reads), each kind in its order. Run from the state the
// turn ran in, the replay reads what the turn read and computes what it
// computed. Run from another state it may take another path: it reads the
// clock readings and draws the turn read, as far as they go, then the
// replay's own clock (the turn's instant, moved on by the replay's own
// sleeps) and a source seeded by the turn, which is what the turn would
// have read there. A call out is answered only where the turn made the
// same call; any other call out, a fetch out, and runtime-wide state (a
// circuit breaker) cannot be known: the replay says so (not Exact) and
// what it then computed is a guess.

// ObjectState is what an object keeps from one turn to the next: its
// storage (with its SQL tables, as Storage.Snapshot writes them) and its
// alarm.
type ObjectState struct {
	Storage map[string]any
	Alarm   AlarmState
}

// Lineage is an instance as a checker keeps it (rule C2: the model keeps
// what the instance keeps): the object's state when the instance was
// built, and the turns it ran since, in order. Replaying them on a fresh
// instance over Base brings back the fields they left.
type Lineage struct {
	Base  ObjectState
	Turns []*Turn
}

// Replayed is what a turn computed when replayed alone (Replay).
type Replayed struct {
	// Value and Err are what a request's caller got: a copy of the
	// method's result, or its error (a *stub.Error).
	Value any
	Err   error
	// Fetch is a fetch handler's response (Status, RespHeader, RespBody).
	Fetch *FetchExchange
	// State is the object's storage and alarm after the turn.
	State ObjectState
	// Memory is what the instance keeps in its fields after the turn, as
	// text, when a fresh instance built over State would keep otherwise;
	// "" when it would keep the same (the class keeps nothing in fields,
	// or what it keeps a constructor rebuilds), so that a checker need
	// not keep this instance (Lineage).
	Memory string
	// Effects are the side effects the turn recorded; Calls the calls it
	// made to other objects (answered from the turn's reads).
	Effects []Effect
	Calls   []CallOut
	// Events are the trace events the turn recorded.
	Events []object.Event
	// Exact says the replay read exactly what the turn read, in order:
	// then the replay computed what the turn would have from State's
	// predecessor. Otherwise Diverged says where it read otherwise.
	Exact    bool
	Diverged string
	// Open says the replay read the clock or drew from the seeded source
	// past what the turn (and its instance's constructor) read as it ran:
	// what it computed then depends on the turn's instant and identity
	// (At, Call, Attempt, Kind), not only on the state and the reads.
	Open bool
}

// ErrReplayDiverged is what a replayed turn's call out returns when the
// turn did not make that call as it ran (Replayed.Exact is then false).
var ErrReplayDiverged = errors.New("dosim replay: the turn did not make this call as it ran")

// Replay runs turn t of an object of class ctor once, alone, on a fresh
// instance over state: ReplayAfter with no turns before it.
func Replay(ctor Constructor, state ObjectState, t Turn) Replayed {
	return ReplayAfter(ctor, Lineage{Base: state}, &t)
}

// ReplayAfter runs turn t of an object of class ctor on the instance l
// describes, in a runtime of its own (no faults, no eviction, no alarm or
// task timers: only these turns run). The instance is built over l.Base,
// its constructor fed what the constructor of the first turn's instance
// read; it runs l.Turns, then t, each at the instant it began and with its
// reads fed back in order (rule C1). A request turn calls the method (or
// fetch handler) with the turn's arguments; an alarm turn delivers the
// alarm as the state holds it; a schedule or queue turn runs the lane's
// due tasks. What t computed is returned; the earlier turns' outputs are
// not.
func ReplayAfter(ctor Constructor, l Lineage, t *Turn) Replayed {
	rep, s := ReplayOn(ctor, l, t, nil)
	s.Close()
	return rep
}

// A Session is an instance replayed to the end of some turns, in a
// runtime of its own, kept so that the instance's next turn runs on it
// without replaying those turns again (ReplayOn). It holds a goroutine
// and the object's storage: Close it.
type Session struct {
	r  *Runtime
	ns *Namespace
	id object.ID
	rp *replayer
}

// Close frees the session. Closing a nil Session does nothing.
func (s *Session) Close() {
	if s != nil {
		_ = s.r.Close()
	}
}

// ReplayOn runs turn t on s, a session that replayed the instance l
// describes to its end, or, when s is nil, on a new one built from l
// (see ReplayAfter): the same turns on the same instance, so what t
// computes is the same either way. It returns what t computed and the
// session after t, on which the instance's next turn can run: nil (and s
// closed) when the replay diverged, or when the instance keeps nothing a
// fresh one would not (Replayed.Memory is empty).
func ReplayOn(ctor Constructor, l Lineage, t *Turn, s *Session) (Replayed, *Session) {
	if s == nil {
		var failed Replayed
		if s, failed = newSession(ctor, l, t); s == nil {
			return failed, nil
		}
	}
	out := s.run(t)
	if out.Memory == "" || !out.Exact {
		s.Close()
		return out, nil
	}
	return out, s
}

// newSession builds the instance l describes and runs its turns; on a
// failure it returns a nil session and what the replay of t computed
// instead (an error, where it diverged).
func newSession(ctor Constructor, l Lineage, t *Turn) (*Session, Replayed) {
	first := t
	if len(l.Turns) > 0 {
		first = l.Turns[0]
	}
	rp := newReplayer(first.Ctor)
	r := New(WithStart(first.At), WithEviction(false), withReplay(rp))
	ns := r.Namespace(t.Namespace, ctor)
	id := ns.IDFromName(t.Object)
	if len(t.Object) == 64 {
		if hid, err := ns.IDFromString(t.Object); err == nil {
			id = hid
		}
	}
	h := ns.host(id)
	rp.h = h
	if err := h.storage.Restore(l.Base.Storage); err != nil {
		_ = r.Close()
		return nil, Replayed{Err: fmt.Errorf("replay: restore: %w", err), Diverged: "the state could not be restored"}
	}
	if a := l.Base.Alarm; a.Set {
		at := a.At.Sub(r.start) // the history keeps no first instant: a retry's stands for it
		h.alarm = alarmState{set: true, at: at, retry: a.Retry, backoff: a.Backoff, infra: a.Infra,
			waiting: a.Retry > 0 || a.Backoff > 0, first: at}
	} else if a.GaveUp {
		h.alarm = alarmState{first: a.At.Sub(r.start), gaveUp: h.state}
	}
	s := &Session{r: r, ns: ns, id: id, rp: rp}
	for _, u := range l.Turns {
		var before Replayed
		rp.replayTurn(r, ns, id, u, &before)
		if rp.why != "" {
			why := "an earlier turn of its instance replayed otherwise: " + rp.why
			out := Replayed{Err: before.Err, Diverged: why, State: h.objectState()}
			s.Close()
			return nil, out
		}
	}
	return s, Replayed{}
}

// run replays turn t on the session's instance and returns what it
// computed.
func (s *Session) run(t *Turn) Replayed {
	r, rp, h := s.r, s.rp, s.rp.h
	effects, events := len(r.effects), r.events.n
	var out Replayed
	rp.made, rp.open = nil, false
	rp.replayTurn(r, s.ns, s.id, t, &out)
	out.State = h.objectState()
	out.Effects = r.effectsSince(effects)
	out.Events = r.events.since(events)
	out.Calls = rp.made
	out.Memory = rp.memory(r, h, t)
	out.Exact, out.Diverged, out.Open = rp.why == "", rp.why, rp.open
	return out
}

// replayTurn runs turn t in r with its reads, at its instant, and keeps
// what a request's caller got in out.
func (rp *replayer) replayTurn(r *Runtime, ns *Namespace, id object.ID, t *Turn, out *Replayed) {
	if d := t.At.Sub(r.start) - r.k.Now(); d > 0 {
		_ = r.Advance(d) // nothing is due in a replay: no timers are armed
	}
	rp.begin(r, t)
	h := rp.h
	runErr := r.Run(func(ctx context.Context) error {
		switch t.Kind {
		case TurnRequest:
			return replayRequest(ctx, ns, id, *t, out)
		case TurnAlarm:
			h.fire(wire.LaneAlarm)
		case TurnSchedule:
			h.fire(wire.LaneSchedule)
		case TurnQueue:
			h.fire(wire.LaneQueue)
		default:
			return fmt.Errorf("replay: turn kind %v", t.Kind)
		}
		return nil
	})
	if runErr != nil {
		rp.diverge("the replay failed: " + runErr.Error())
		if out.Err == nil {
			out.Err = runErr
		}
	}
}

// memory is what the instance keeps after turn t, as Replayed.Memory
// says: its fields as text, or "" when an instance built anew over the
// state now, with the constructor reads of t's instance, keeps the same.
func (rp *replayer) memory(r *Runtime, h *host, t *Turn) string {
	if h.inst == nil {
		return "" // reset under the turn: the next turn builds one
	}
	text := fields.Text(h.inst)
	if text == "" {
		return ""
	}
	inst, methods, handler, compiled, n := h.inst, h.methods, h.handler, h.compiled, h.instances
	h.inst = nil
	rp.ctorClocks, rp.ctorDraws = splitReads(t.Ctor)
	fresh := ""
	if h.build() == nil { // a constructor takes no ctx: it needs no task
		fresh = fields.Text(h.inst)
	}
	h.inst, h.methods, h.handler, h.compiled, h.instances = inst, methods, handler, compiled, n
	if fresh == text {
		return ""
	}
	return text
}

// replayRequest makes the turn's call through a stub that never retries.
func replayRequest(ctx context.Context, ns *Namespace, id object.ID, t Turn, out *Replayed) error {
	s, err := ns.Get(id, stub.MaxRetries(0))
	if err != nil {
		return err
	}
	if t.Fetch == nil {
		out.Value, out.Err = s.Call(ctx, t.Method, t.Args...)
		return nil
	}
	x := t.Fetch
	if x.BodyErr != "" {
		ns.r.replay.diverge("the request body failed as the handler read it: " + x.BodyErr)
	}
	req, err := http.NewRequestWithContext(ctx, x.Method, x.URL, bytes.NewReader(x.Body))
	if err != nil {
		out.Err = err
		return nil
	}
	req.Header = x.Header.Clone()
	resp, err := s.Fetch(ctx, req)
	if err != nil {
		out.Err = err
		return nil
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	_ = resp.Body.Close()
	out.Fetch = &FetchExchange{Status: resp.StatusCode, RespHeader: resp.Header, RespBody: body.Bytes()}
	return nil
}

// withReplay makes a runtime replay one turn with rp's reads.
func withReplay(rp *replayer) Option { return optionFunc(func(r *Runtime) { r.replay = rp }) }

// replayer feeds replayed turns the reads of the turns they replay, each
// kind in its order, and the instance's constructor what the constructor
// of the instance read.
type replayer struct {
	h          *host // the replayed object's
	clocks     []time.Time
	draws      []uint64
	calls      []*CallOut
	ctorClocks []time.Time
	ctorDraws  []uint64
	extra      *rand.Rand // draws past the turn's: seeded by the turn
	// at and k0 are the turn's instant and the kernel's clock when its
	// replay began: a reading past the turn's own is at + elapsed.
	at   time.Time
	k0   time.Duration
	why  string    // how the replay diverged; "" while it has not
	open bool      // it read past what the turn read (Replayed.Open)
	made []CallOut // the calls out the replayed turn made, as answered
}

func newReplayer(ctor []Read) *replayer {
	rp := &replayer{}
	rp.ctorClocks, rp.ctorDraws = splitReads(ctor)
	return rp
}

// splitReads splits a constructor's reads into its clock readings and
// its draws.
func splitReads(reads []Read) (clocks []time.Time, draws []uint64) {
	for _, rd := range reads {
		switch rd.Kind {
		case ReadClock:
			clocks = append(clocks, rd.Time)
		case ReadRandom:
			draws = append(draws, rd.Value)
		}
	}
	return clocks, draws
}

// begin loads turn t's reads, for its replay in r.
func (rp *replayer) begin(r *Runtime, t *Turn) {
	rp.clocks, rp.draws, rp.calls = rp.clocks[:0], rp.draws[:0], rp.calls[:0]
	for _, rd := range t.Reads {
		switch rd.Kind {
		case ReadClock:
			rp.clocks = append(rp.clocks, rd.Time)
		case ReadRandom:
			rp.draws = append(rp.draws, rd.Value)
		case ReadCall:
			rp.calls = append(rp.calls, rd.Call)
		}
	}
	seed := uint64(t.At.UnixNano()) ^ uint64(t.Call)<<32 ^ uint64(t.Attempt)
	rp.extra = rand.New(rand.NewPCG(seed, uint64(t.Kind)))
	rp.at, rp.k0 = t.At, r.k.Now()
}

// diverge notes the first way the replay read what it cannot know.
func (rp *replayer) diverge(why string) {
	if rp.why == "" {
		rp.why = why
	}
}

// inTurn reports whether the running task runs a turn of h (any host when
// h is nil) past its constructor: what a replay feeds reads to.
func (r *Runtime) inTurn(h *host) bool {
	cur := r.k.Current()
	if cur == nil {
		return false
	}
	t, ok := cur.Work().(objectTurn)
	if !ok {
		return false
	}
	th, _ := t.ofObject()
	return (h == nil || th == h) && !th.building
}

// now is the replayed turn's clock past its own readings: its instant,
// moved on by the replay's own sleeps.
func (rp *replayer) now(r *Runtime) time.Time { return rp.at.Add(r.k.Now() - rp.k0) }

// clock is the replayed turn's clock reading (or its constructor's).
func (rp *replayer) clock(r *Runtime, h *host) time.Time {
	switch {
	case h == rp.h && h.building:
		if len(rp.ctorClocks) == 0 {
			rp.open = true
			return rp.now(r)
		}
		t := rp.ctorClocks[0]
		rp.ctorClocks = rp.ctorClocks[1:]
		return t
	case !r.inTurn(h):
		return r.Now()
	case len(rp.clocks) == 0:
		rp.open = true
		return rp.now(r)
	}
	t := rp.clocks[0]
	rp.clocks = rp.clocks[1:]
	return t
}

// replaySource is the seeded source of a replayed turn.
type replaySource struct{ r *Runtime }

func (s replaySource) Uint64() uint64 {
	rp := s.r.replay
	switch {
	case rp.h != nil && rp.h.building:
		if len(rp.ctorDraws) == 0 {
			rp.open = true
			return rp.extra.Uint64()
		}
		v := rp.ctorDraws[0]
		rp.ctorDraws = rp.ctorDraws[1:]
		return v
	case !s.r.inTurn(nil):
		return s.r.pcg.Uint64()
	case len(rp.draws) == 0:
		rp.open = true
		return rp.extra.Uint64()
	}
	v := rp.draws[0]
	rp.draws = rp.draws[1:]
	return v
}

// ReplayCall answers a call the replayed turn makes to another object's
// stub (wire.CallReplayer): from the turn's reads, when it made that
// call there.
func (ti *turnInfo) ReplayCall(namespace, name, method string, args []any) (any, error, bool) {
	return ti.h.ns.r.replayCall(namespace, name, method, args)
}

// ReplayCall answers a call out of a replayed lane turn (see turnInfo's).
func (lt *laneTurn) ReplayCall(namespace, name, method string, args []any) (any, error, bool) {
	return lt.h.ns.r.replayCall(namespace, name, method, args)
}

func (r *Runtime) replayCall(namespace, name, method string, args []any) (any, error, bool) {
	rp := r.replay
	if rp == nil {
		return nil, nil, false
	}
	if method == "fetch" {
		rp.diverge(fmt.Sprintf("it fetched %s/%s, and a replay cannot answer a fetch out", namespace, name))
		return nil, fmt.Errorf("%w: %s/%s fetch", ErrReplayDiverged, namespace, name), true
	}
	if rp.why != "" {
		return nil, fmt.Errorf("%w: %s/%s.%s", ErrReplayDiverged, namespace, name, method), true
	}
	if len(rp.calls) == 0 {
		rp.diverge(fmt.Sprintf("it called %s/%s.%s, a call the turn did not make", namespace, name, method))
		return nil, fmt.Errorf("%w: %s/%s.%s", ErrReplayDiverged, namespace, name, method), true
	}
	c := rp.calls[0]
	if c.Namespace != namespace || c.Object != name || c.Method != method || !sameArgs(c.Args, args) {
		rp.diverge(fmt.Sprintf("it called %s/%s.%s where the turn called %s/%s.%s", namespace, name, method, c.Namespace, c.Object, c.Method))
		return nil, fmt.Errorf("%w: %s/%s.%s", ErrReplayDiverged, namespace, name, method), true
	}
	rp.calls = rp.calls[1:]
	rp.made = append(rp.made, *c)
	return copyValue(c.Result), copyErr(c.Err), true
}

// sameArgs reports whether a replayed call's arguments are the recorded
// ones: equal as values, or as their JSON.
func sameArgs(rec, got []any) bool {
	if len(rec) != len(got) {
		return false
	}
	for i := range rec {
		g, _, err := clone.Copy(got[i], refs)
		if err != nil {
			return false
		}
		if reflect.DeepEqual(rec[i], g) {
			continue
		}
		a, errA := json.Marshal(rec[i])
		b, errB := json.Marshal(g)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			return false
		}
	}
	return true
}
