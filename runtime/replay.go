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
}

// ErrReplayDiverged is what a replayed turn's call out returns when the
// turn did not make that call as it ran (Replayed.Exact is then false).
var ErrReplayDiverged = errors.New("dosim replay: the turn did not make this call as it ran")

// Replay runs turn t of an object of class ctor once, alone, on a fresh
// instance over state, in a runtime of its own (no faults, no eviction,
// no alarm or task timers: only this turn runs), at the instant the turn
// began, with the turn's reads fed back in order (rule C1). A request turn
// calls the method (or fetch handler) with the turn's arguments; an alarm
// turn delivers the alarm as it was (state.Alarm should hold it); a
// schedule or queue turn runs the lane's due tasks.
func Replay(ctor Constructor, state ObjectState, t Turn) Replayed {
	rp := newReplayer(t)
	r := New(WithStart(t.At), WithEviction(false), withReplay(rp))
	defer r.Close()
	ns := r.Namespace(t.Namespace, ctor)
	id := ns.IDFromName(t.Object)
	if len(t.Object) == 64 {
		if hid, err := ns.IDFromString(t.Object); err == nil {
			id = hid
		}
	}
	h := ns.host(id)
	var out Replayed
	if err := h.storage.Restore(state.Storage); err != nil {
		return Replayed{Err: fmt.Errorf("replay: restore: %w", err), Diverged: "the state could not be restored"}
	}
	if a := state.Alarm; a.Set {
		at := a.At.Sub(r.start) // the history keeps no first instant: a retry's stands for it
		h.alarm = alarmState{set: true, at: at, retry: a.Retry, backoff: a.Backoff, infra: a.Infra,
			waiting: a.Retry > 0 || a.Backoff > 0, first: at}
	} else if a.GaveUp {
		h.alarm = alarmState{first: a.At.Sub(r.start), gaveUp: h.state}
	}
	runErr := r.Run(func(ctx context.Context) error {
		switch t.Kind {
		case TurnRequest:
			return replayRequest(ctx, ns, id, t, &out)
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
	out.State = h.objectState()
	out.Effects = r.Effects()
	out.Events = r.Events()
	out.Calls = rp.made
	out.Exact, out.Diverged = rp.why == "", rp.why
	return out
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

// replayer feeds a replayed turn the reads of the turn it replays, each
// kind in its order.
type replayer struct {
	clocks []time.Time
	draws  []uint64
	calls  []*CallOut
	extra  *rand.Rand // draws past the turn's: seeded by the turn
	why    string     // how the replay diverged; "" while it has not
	made   []CallOut  // the calls out the replay made, as answered
}

func newReplayer(t Turn) *replayer {
	rp := &replayer{}
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
	return rp
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

// clock is the replayed turn's clock reading.
func (rp *replayer) clock(r *Runtime, h *host) time.Time {
	if !r.inTurn(h) || len(rp.clocks) == 0 {
		return r.Now()
	}
	t := rp.clocks[0]
	rp.clocks = rp.clocks[1:]
	return t
}

// replaySource is the seeded source of a replayed turn.
type replaySource struct{ r *Runtime }

func (s replaySource) Uint64() uint64 {
	rp := s.r.replay
	if !s.r.inTurn(nil) {
		return s.r.pcg.Uint64()
	}
	if len(rp.draws) == 0 {
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
