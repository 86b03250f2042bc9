package runtime

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/dosim/dosim/internal/fields"
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
	// WebSockets are the sockets the object holds, nil for an object that
	// never accepted one (rule W1).
	WebSockets *SocketsState `json:",omitempty"`
}

// SocketsState is the WebSockets an object holds, in the order accepted,
// and how many it ever accepted: what a turn reads of them (GetWebSockets,
// tags, attachments) and what labels the next.
type SocketsState struct {
	Open     []SocketState
	Accepted int
}

// SocketState is a WebSocket an object holds: its label's number (ws1 is
// 1), its tags and its serialized attachment.
type SocketState struct {
	N          int
	Tags       []string
	Attachment []byte
}

// WebSocketEvent is what a WebSocket turn delivered (TurnWebSocket): a
// client's message, or a close (Close, with its Code, Reason and Clean),
// on the socket numbered N, with its tags and attachment as the turn
// began (a socket the object closed has left its list, yet its close
// still reaches the handler).
type WebSocketEvent struct {
	Socket SocketState
	Text   string
	Data   []byte
	Binary bool
	Close  bool
	Code   int
	Reason string
	Clean  bool
}

// Lineage is an instance as a checker keeps it (rule C2: the model keeps
// what the instance keeps): the object's state when the instance was
// built, and the turns it ran since, in order. Replaying them on a fresh
// instance over Base brings back the fields they left. Together, when
// set, holds for each of Turns how others ran interleaved with it (see
// Interleaving), which its replay follows.
type Lineage struct {
	Base     ObjectState
	Turns    []*Turn
	Together []*Interleaving
}

// Interleaving is how turns ran together at their awaits (rule O3): a
// replayed turn and Turns, the others, and the order in which the
// turns' segments held the object's input gate, each segment running
// from a turn's start, or from a waiting point at which it let the gate
// go (Await), to its next such waiting point or its end. A replay given
// it runs the turns so, where a turn replayed alone is one atomic step:
// the interleaving as it was.
type Interleaving struct {
	Turns []*Turn
	Order []Segment
}

// Segment is a turn's part between two of its waits (see Interleaving):
// Turn is 0 for the replayed turn, i for Turns[i-1]; After is the waiting
// point (Await.Point) it begins after, 0 for the turn's start.
type Segment struct {
	Turn, After int
}

// InterleavingOf is the interleaving of turns as they ran, by their
// stamps (Turn.Began and the Await stamps): turns[0] is the one to
// replay, the rest ran together with it.
func InterleavingOf(turns []*Turn) *Interleaving {
	type start struct {
		at  uint64
		seg Segment
	}
	var starts []start
	for i, t := range turns {
		starts = append(starts, start{t.Began, Segment{Turn: i}})
		// A waiting point may let the gate go more than once (a call out's
		// attempts and backoff sleeps): its segment starts when the turn
		// took the gate back the last time.
		after := map[int]uint64{}
		for _, w := range t.Awaits {
			if w.Ended != 0 {
				after[w.Point] = max(after[w.Point], w.Ended)
			}
		}
		for p, at := range after {
			starts = append(starts, start{at, Segment{Turn: i, After: p}})
		}
	}
	slices.SortFunc(starts, func(a, b start) int { return cmp.Compare(a.at, b.at) })
	in := &Interleaving{Turns: slices.Clone(turns[1:])}
	for _, s := range starts {
		in.Order = append(in.Order, s.seg)
	}
	return in
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
	// Refuted says the replay went otherwise than the turn by a call out:
	// a call the turn did not make, or another call than it made. No run
	// went so: the callee's history holds the calls it got, so the state
	// from which it was replayed is not the one the turn ran from.
	Refuted bool
	// Open says the replay read the clock or drew from the seeded source
	// past what the turn (and its instance's constructor) read as it ran:
	// what it computed then depends on the turn's instant and identity
	// (At, Call, Attempt, Kind), not only on the state and the reads.
	Open bool
	// Together is what each of the turns that ran interleaved with it
	// (ReplayOn's in, Interleaving.Turns) computed: Value, Err, Fetch and
	// Events; their effects, calls out and writes are in the fields above,
	// with the turn's.
	Together []Replayed
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
	rep, s := ReplayOn(ctor, l, t, nil, nil)
	s.Close()
	return rep
}

// A Session is an instance replayed to the end of some turns, in a
// runtime of its own, kept so that the instance's next turn runs on it
// without replaying those turns again (ReplayOn). It holds a goroutine
// and the object's storage: Close it.
type Session struct {
	r  *Runtime
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
// computes is the same either way. With in, the turns in.Turns run
// interleaved with t as in.Order says (see Interleaving); what each
// computed is in Replayed.Together. It returns what t computed and the
// session after them, on which the instance's next turn can run: nil
// (and s closed) when the replay diverged.
func ReplayOn(ctor Constructor, l Lineage, t *Turn, in *Interleaving, s *Session) (Replayed, *Session) {
	return replayOn(ctor, l, t, in, s, false)
}

// ReplayToRead is ReplayOn whose Replayed.State holds the session's
// storage's own values and what was dumped of the same SQL bytes before,
// not copies (object's Hosting.SnapshotToRead), as Outcome's do: to read,
// not to change. Only dosim's own checker calls it (its first
// parameter's type is internal to dosim), which keeps a replay's state
// and reads it: a copy of every entry of every replayed state was 3.6% of
// a booth seed's allocations.
func ReplayToRead(_ sealKey, ctor Constructor, l Lineage, t *Turn, in *Interleaving, s *Session) (Replayed, *Session) {
	return replayOn(ctor, l, t, in, s, true)
}

func replayOn(ctor Constructor, l Lineage, t *Turn, in *Interleaving, s *Session, toRead bool) (Replayed, *Session) {
	if s == nil {
		var failed Replayed
		if s, failed = newSession(ctor, l, t); s == nil {
			return failed, nil
		}
	}
	out := s.run(t, in, toRead)
	if !out.Exact {
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
	r.alarmSeed = first.Seed
	opts := bindingOptions(t.Bindings)
	if t.Backend == object.KeyValueBacked {
		opts = append(opts, KeyValueBacked())
	}
	ns := r.Namespace(t.Namespace, ctor, opts...)
	id := ns.IDFromName(t.Object)
	if len(t.Object) == 64 {
		if hid, err := ns.IDFromString(t.Object); err == nil {
			id = hid
		}
	}
	h := ns.host(id)
	rp.h, rp.ns, rp.id = h, ns, id
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
	h.restoreSockets(l.Base)
	s := &Session{r: r, rp: rp}
	for i, u := range l.Turns {
		var in *Interleaving
		if i < len(l.Together) {
			in = l.Together[i]
		}
		var before Replayed
		rp.replayTurn(r, u, in, &before)
		if rp.why != "" {
			why := "an earlier turn of its instance replayed otherwise: " + rp.why
			out := Replayed{Err: before.Err, Diverged: why, State: h.objectState()}
			s.Close()
			return nil, out
		}
	}
	return s, Replayed{}
}

// run replays turn t on the session's instance, interleaved with others
// as in says, and returns what it computed (its state's entries the
// storage's own with toRead: ReplayToRead).
func (s *Session) run(t *Turn, in *Interleaving, toRead bool) Replayed {
	r, rp, h := s.r, s.rp, s.rp.h
	effects := len(r.effects)
	var out Replayed
	rp.made, rp.open = nil, false
	rp.replayTurn(r, t, in, &out)
	out.State = h.stateOf(toRead)
	out.Effects = r.effectsSince(effects, nil)
	out.Calls = rp.made
	out.Together = rp.together.outs()
	out.Memory = rp.memory(r, h, t)
	out.Exact, out.Diverged, out.Open, out.Refuted = rp.why == "", rp.why, rp.open, rp.refuted
	return out
}

// replayTurn runs turn t in r with its reads, at its instant,
// interleaved with others as in says, and keeps what a request's caller
// got, and the events it recorded, in out.
func (rp *replayer) replayTurn(r *Runtime, t *Turn, in *Interleaving, out *Replayed) {
	if d := t.At.Sub(r.start) - r.k.Now(); d > 0 {
		_ = r.Advance(d) // nothing is due in a replay: no timers are armed
	}
	rp.main = rp.reads(r, t)
	rp.together = newTogether(rp.main, in)
	runErr := r.Run(func(ctx context.Context) error {
		err := rp.turnBody(ctx, r, t, out)
		rp.together.end(r, rp, 0)
		return err
	})
	if runErr != nil {
		rp.diverge("the replay failed: " + runErr.Error())
		if out.Err == nil {
			out.Err = runErr
		}
	}
	if why := rp.together.unfinished(); why != "" {
		rp.diverge(why)
	}
	out.Events = rp.main.events
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
