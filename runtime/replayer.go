package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
)

// The replayer of a replay runtime (ReplayOn): it feeds each replayed turn
// the reads of the turn it replays, and the instance's constructor what
// the instance's constructor read; turns replayed interleaved run as the
// segments of together say (interleave.go).

// withReplay makes a runtime replay turns with rp's reads.
func withReplay(rp *replayer) Option { return optionFunc(func(r *Runtime) { r.replay = rp }) }

// replayer feeds replayed turns their reads (see the file's comment).
type replayer struct {
	h          *host // the replayed object's
	ns         *Namespace
	id         object.ID
	ctorClocks []time.Time
	ctorDraws  []uint64
	// cur is the turn whose reads are fed now, main the one replayed at
	// the top (cur, but while a turn that came in during its wait runs).
	cur, main *turnReads
	why       string    // how the replay diverged; "" while it has not
	refuted   bool      // it diverged by a call out the turn did not make
	open      bool      // it read past what the turn read (Replayed.Open)
	made      []CallOut // the calls out the replayed turns made, as answered
	// together runs the turns interleaved with the main one (nil: none).
	together *together
	// bound holds the namespaces the replayed object binds to
	// (runtime.Binding): a runtime apart, so that a call to one of its
	// objects is a call out, answered from the turn's reads (stub's
	// replayed), never delivered. Made on the first Binding; closed with
	// the replay's runtime.
	bound *Runtime
}

// turnReads is what one replayed turn is fed, and the events it records.
type turnReads struct {
	clocks []time.Time
	draws  []uint64
	calls  []*CallOut
	socks  []int      // the numbers of the sockets the turn accepted
	extra  *rand.Rand // draws past the turn's: seeded by the turn
	// at and k0 are the turn's instant and the kernel's clock when its
	// replay began: a reading past the turn's own is at + elapsed.
	at     time.Time
	k0     time.Duration
	events []object.Event
	cut    bool // the turn was cut short (Turn.Cut)
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

// reads makes turn t's reads, for its replay in r from now on, and feeds
// them from now on.
func (rp *replayer) reads(r *Runtime, t *Turn) *turnReads {
	tr := &turnReads{}
	for _, rd := range t.Reads {
		switch rd.Kind {
		case ReadClock:
			tr.clocks = append(tr.clocks, rd.Time)
		case ReadRandom:
			tr.draws = append(tr.draws, rd.Value)
		case ReadCall:
			tr.calls = append(tr.calls, rd.Call)
		case ReadSocket:
			tr.socks = append(tr.socks, int(rd.Value))
		}
	}
	seed := uint64(t.At.UnixNano()) ^ uint64(t.Call)<<32 ^ uint64(t.Attempt)
	tr.extra = rand.New(rand.NewPCG(seed, uint64(t.Kind)))
	tr.at, tr.k0, tr.cut = t.At, r.k.Now(), t.Cut != ""
	rp.cur = tr
	return tr
}

// diverge notes the first way the replay read what it cannot know.
func (rp *replayer) diverge(why string) {
	if rp.why == "" {
		rp.why = why
	}
}

// refute notes that the replay made a call out the turn did not make, as
// the first way it went otherwise (Replayed.Refuted): unless the turn was
// cut short, which its replay does not reproduce (a stale instance's
// pending calls end at the reset, a replay's go on), so that its calls
// after the cut are unknown, not refuted.
func (rp *replayer) refute(why string) {
	if rp.why == "" {
		rp.why, rp.refuted = why, rp.cur == nil || !rp.cur.cut
	}
}

// argsText is a call's arguments as a person reads them, short.
func argsText(args []any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return "(...)"
	}
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return "(" + strings.TrimSuffix(strings.TrimPrefix(s, "["), "]") + ")"
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
func (tr *turnReads) now(r *Runtime) time.Time { return tr.at.Add(r.k.Now() - tr.k0) }

// clock is the replayed turn's clock reading (or its constructor's).
func (rp *replayer) clock(r *Runtime, h *host) time.Time {
	tr := rp.cur
	switch {
	case h == rp.h && h.building:
		if len(rp.ctorClocks) == 0 {
			rp.open = true
			if tr == nil {
				return r.Now()
			}
			return tr.now(r)
		}
		t := rp.ctorClocks[0]
		rp.ctorClocks = rp.ctorClocks[1:]
		return t
	case !r.inTurn(h) || tr == nil:
		return r.Now()
	case len(tr.clocks) == 0:
		rp.open = true
		return tr.now(r)
	}
	t := tr.clocks[0]
	tr.clocks = tr.clocks[1:]
	return t
}

// socketNumber is the number of the socket a replayed turn of h accepts
// next: the one the turn's socket got, else next (the object's count plus
// one).
func (rp *replayer) socketNumber(r *Runtime, h *host, next int) int {
	tr := rp.cur
	if !r.inTurn(h) || tr == nil || len(tr.socks) == 0 {
		return next
	}
	n := tr.socks[0]
	tr.socks = tr.socks[1:]
	return n
}

// replaySource is the seeded source of a replayed turn.
type replaySource struct{ r *Runtime }

func (s replaySource) Uint64() uint64 {
	rp := s.r.replay
	tr := rp.cur
	switch {
	case rp.h != nil && rp.h.building && tr != nil: // a constructor runs in a turn's replay
		if len(rp.ctorDraws) == 0 {
			rp.open = true
			return tr.extra.Uint64()
		}
		v := rp.ctorDraws[0]
		rp.ctorDraws = rp.ctorDraws[1:]
		return v
	case !s.r.inTurn(nil) || tr == nil:
		return s.r.pcg.Uint64()
	case len(tr.draws) == 0:
		rp.open = true
		return tr.extra.Uint64()
	}
	v := tr.draws[0]
	tr.draws = tr.draws[1:]
	return v
}

// event keeps an event the replayed turns recorded as the running one's.
func (rp *replayer) event(e object.Event) {
	if rp.cur != nil {
		rp.cur.events = append(rp.cur.events, e)
	}
}

// ReplayCall answers a call the replayed turn makes to another object's
// stub (turn.CallReplayer): from the turn's reads, when it made that
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
	rp.await(r) // a call out is a waiting point
	if method == "fetch" {
		rp.diverge(fmt.Sprintf("it fetched %s/%s, and a replay cannot answer a fetch out", namespace, name))
		return nil, fmt.Errorf("%w: %s/%s fetch", ErrReplayDiverged, namespace, name), true
	}
	if rp.why != "" {
		return nil, fmt.Errorf("%w: %s/%s.%s", ErrReplayDiverged, namespace, name, method), true
	}
	tr := rp.cur
	if tr == nil || len(tr.calls) == 0 {
		rp.refute(fmt.Sprintf("it called %s/%s.%s, a call the turn did not make", namespace, name, method))
		return nil, fmt.Errorf("%w: %s/%s.%s", ErrReplayDiverged, namespace, name, method), true
	}
	c := tr.calls[0]
	if c.Namespace != namespace || c.Object != name || c.Method != method || !sameArgs(c.Args, args) {
		rp.refute(fmt.Sprintf("it called %s/%s.%s%s where the turn called %s/%s.%s%s",
			namespace, name, method, argsText(args), c.Namespace, c.Object, c.Method, argsText(c.Args)))
		return nil, fmt.Errorf("%w: %s/%s.%s", ErrReplayDiverged, namespace, name, method), true
	}
	tr.calls = tr.calls[1:]
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

// await is a waiting point of the running turn (a call out, a sleep):
// where the turns run interleaved, it may end the turn's segment.
func (rp *replayer) await(r *Runtime) {
	if rp.together != nil {
		rp.together.await(r, rp)
	}
}

// turnBody runs turn t of the replayed object on the running task: a
// request through a stub that never retries, a background turn as its
// lane runs it.
func (rp *replayer) turnBody(ctx context.Context, r *Runtime, t *Turn, out *Replayed) error {
	switch t.Kind {
	case TurnRequest:
		return replayRequest(ctx, rp.ns, rp.id, *t, out)
	case TurnAlarm, TurnSchedule, TurnQueue:
		rp.h.runLane(ctx, laneOf(t.Kind))
		return nil
	case TurnWebSocket:
		if t.WebSocket == nil {
			rp.diverge("its WebSocket event was not recorded")
			return fmt.Errorf("%w: a WebSocket turn without its event", ErrReplayDiverged)
		}
		rp.h.replayWebSocket(ctx, t.WebSocket)
		return nil
	}
	return fmt.Errorf("replay: turn kind %v", t.Kind)
}

// runLane runs lane l's turn on the running task, as fire runs it on a
// task of its own: a replay runs one turn at a time, to its end.
func (h *host) runLane(ctx context.Context, l wire.Lane) {
	ln := h.lane(l)
	ln.armed = false
	if ln.running {
		return
	}
	ln.running = true
	(&laneTurn{h: h, lane: l}).run(ctx)
}

// laneOf is the lane whose turn a background turn of kind k is.
func laneOf(k TurnKind) wire.Lane {
	switch k {
	case TurnAlarm:
		return wire.LaneAlarm
	case TurnSchedule:
		return wire.LaneSchedule
	}
	return wire.LaneQueue
}
