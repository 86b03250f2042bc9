package explore

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
)

// An object's history, as the linearizability check reads it (rules C1,
// C2): the operations the object ran, each a call (the turns of its
// attempts that ran the method) or a turn of its own background work (an
// alarm delivery, a run of its scheduled or queued tasks), with the
// virtual instant and the reads it ran with, what its caller saw, and when
// it began and ended among the object's other turns; then the object's
// end state.

// seen is what a call's caller saw of it, as the model compares it.
type seen struct {
	known bool   // the caller got the method's own answer
	key   string // its resultKey or fetchKey ("" for a fetch still to fill in)
}

// runView is what the linearizability check reads of a run, whether a
// scenario's or an explored function's.
type runView struct {
	Calls []runtime.CallRecord
	// Seen is what each call's caller saw, by index of Calls.
	Seen []seen
	// Inputs are, by index of Calls, the model's step key of each call
	// without its reads ("R METHOD ARGS"): made once per scenario call,
	// when known (nil: made from the record).
	Inputs  []string
	History *runtime.History
	Effects []runtime.Effect
	// Ctors are the run's constructors, by namespace.
	Ctors map[string]runtime.Constructor
}

// hop is one operation of an object's history.
type hop struct {
	// turn is the operation's turn: a call's whose reply its caller got
	// (else its last); it names the operation.
	turn *runtime.Turn
	// alts are the turns the model may replay for it, each with its step
	// key: a background turn's own; for a call each of its executing turns
	// that ran to its end (all of them when none did). A call applied once
	// is applied as one of its executions ran: the first of a method that
	// keeps its answer under a key, the last of one that overwrites.
	first alt
	rest  []alt
	// calls are the calls out every turn of the operation made, as effects
	// of the object: made whether or not the turn that made them was cut
	// short, so they are in the end state even when the model applies none
	// of the turns, or another one (see alt.others).
	calls []string
	seen  seen
	// maybe: the turn was cut short (a reset, a lost write, a
	// cancellation), so it may have taken effect or not.
	maybe    bool
	from, to uint64 // the turns' Began and Ended stamps
	call     *runtime.CallRecord
	// final marks the read of the end state that ends every history.
	final bool
	// parts and injected are set on an operation that stands for turns
	// that ran interleaved at their awaits (objHistory.interleaved): what
	// each turn's caller saw, the first's first, and the operations of the
	// others.
	parts    []seen
	injected []*hop
}

// nalts is how many turns the model may replay for op.
func (op *hop) nalts() int { return 1 + len(op.rest) }

// alt returns op's i-th alternative.
func (op *hop) alt(i int) *alt {
	if i == 0 {
		return &op.first
	}
	return &op.rest[i-1]
}

// alt is one turn the model may replay for an operation, with its step
// key: all the step depends on besides the state (what the turn ran and
// what it read).
type alt struct {
	turn  *runtime.Turn
	input string
	// others are the calls out of the operation's other turns (hop.calls
	// less this turn's own, which its replay makes): the model adds them
	// when it applies the operation as this turn ran.
	others []string
	// together is how other turns ran interleaved with this one at their
	// awaits, which its replay follows (a group: objHistory.interleaved).
	together *runtime.Interleaving
}

// label names the operation for a person.
func (op *hop) label() string {
	t := op.turn
	switch {
	case op.final:
		return "end state"
	case t.Kind == runtime.TurnAlarm && t.Alarm != nil:
		return fmt.Sprintf("alarm delivery (retry %d) at %v", t.Alarm.Retry, t.Start)
	case t.WebSocket != nil:
		return webSocketLabel(t.WebSocket, t.Start)
	case t.Kind != runtime.TurnRequest:
		return fmt.Sprintf("%s run at %v", t.Kind, t.Start)
	case t.Fetch != nil:
		return "fetch " + t.Fetch.Method + " " + t.Fetch.URL
	}
	return render.CallText(op.call.Method, op.call.Args)
}

// objHistory is one object's history.
type objHistory struct {
	ns, name string
	ctor     runtime.Constructor
	obj      *runtime.ObjectHistory
	ops      []hop
	maybes   int      // ops of unknown effect
	end      []string // the effects and calls out the object made, for its end state
	// skip is why the history cannot be checked ("" when it can), one of
	// the Reason constants.
	skip string
}

// Why an object history is not checked (Summary.Unchecked counts them).
const (
	// ReasonCut: more of the history's turns were cut short (by a reset,
	// a lost write or a cancellation: each may have taken effect or not)
	// than Options.MaxAmbiguous allows.
	ReasonCut = "too many turns cut short"
	// ReasonUnreproducible: no order of the operations explains the
	// history, but the model could not replay some turn as it ran (it read
	// runtime-wide state such as a circuit breaker, fetched another
	// object, or read other values than it did), so that is not a
	// violation anybody can be sure of.
	ReasonUnreproducible = "a turn the model cannot reproduce"
	// ReasonOutside: storage was written, or effects recorded, outside
	// the object's turns (a test writing its storage between calls).
	ReasonOutside = "state changed outside the object's turns"
	// ReasonUnfinished: a turn had not ended when the run did.
	ReasonUnfinished = "a turn that never ended"
	// ReasonNoClass: the object's class is not known or cannot be built.
	ReasonNoClass = "its class cannot be built"
	// ReasonStates: the operations whose effect is unknown leave more
	// possible states than the check follows (maxStates).
	ReasonStates = "too many possible states"
)

// histories builds each object's history from a run.
func histories(v *runView, maxCut int, broken map[string]bool) []objHistory {
	if v.History == nil {
		return nil
	}
	out := make([]objHistory, len(v.History.Objects))
	for i := range v.History.Objects {
		oh := &v.History.Objects[i]
		h := &out[i]
		*h = objHistory{ns: oh.Namespace, name: oh.Object, ctor: v.Ctors[oh.Namespace], obj: oh}
		switch {
		case h.ctor == nil || broken[oh.Namespace]:
			h.skip = ReasonNoClass
		case oh.Outside > 0:
			h.skip = ReasonOutside
		}
	}
	// Each object's operations in one array: as many as its turns at most.
	var ownerBuf [16]*objHistory
	var owner []*objHistory
	if n := len(v.History.Turns); n <= len(ownerBuf) {
		owner = ownerBuf[:n]
	} else {
		owner = make([]*objHistory, n)
	}
	for i := range v.History.Turns {
		t := v.History.Turns[i]
		if owner[i] = find(out, t.Namespace, t.Object); owner[i] != nil {
			owner[i].maybes++ // counts turns for now
		}
	}
	arena := make([]hop, len(v.History.Turns))
	for i := range out {
		n := out[i].maybes
		out[i].ops, arena, out[i].maybes = arena[:0:n], arena[n:], 0
	}
	for i := range v.History.Turns {
		t, h := v.History.Turns[i], owner[i]
		if h == nil {
			continue
		}
		if t.Cut == "unfinished" && h.skip == "" {
			h.skip = ReasonUnfinished
		}
		for _, rd := range t.Reads {
			if rd.Kind == runtime.ReadCall {
				h.end = append(h.end, callEffect(rd.Call))
			}
		}
		if t.Kind != runtime.TurnRequest {
			h.ops = append(h.ops, laneOp(t))
			continue
		}
		if k := slices.IndexFunc(h.ops, func(op hop) bool { return op.call != nil && op.turn.Call == t.Call }); k >= 0 {
			addTurn(v, &h.ops[k], t)
			continue
		}
		if op, ok := callOp(v, t); ok {
			h.ops = append(h.ops, op)
		}
	}
	for i := range out {
		out[i].finish(v, maxCut)
	}
	return out
}

// finish completes h once its turns are in: the outcome of each call as its
// caller saw it, the turns that may or may not have taken effect (too many
// and h is skipped) and the effects the object made, for its end state.
func (h *objHistory) finish(v *runView, maxCut int) {
	for k := range h.ops {
		op := &h.ops[k]
		if op.call != nil {
			finishCall(v, op)
		}
		if op.maybe {
			h.maybes++
		}
	}
	if h.skip == "" && h.maybes > maxCut {
		h.skip = ReasonCut
	}
	for _, e := range v.Effects {
		if e.Namespace == h.ns && e.Object == h.name {
			h.end = append(h.end, effectText(e.Kind, e.Payload))
		}
	}
}

// find returns the history of ns/name among hs.
func find(hs []objHistory, ns, name string) *objHistory {
	for i := range hs {
		if hs[i].name == name && hs[i].ns == ns {
			return &hs[i]
		}
	}
	return nil
}

// callOp starts the operation of the call whose first executing turn is
// t: the model applies it once, as one of its executions ran, within the
// span of all of them.
func callOp(v *runView, t *runtime.Turn) (hop, bool) {
	if t.Call < 1 || t.Call > len(v.Calls) {
		return hop{}, false
	}
	return hop{turn: t, first: alt{turn: t}, call: &v.Calls[t.Call-1], from: t.Began, to: t.Ended, calls: turnCalls(nil, t)}, true
}

// turnCalls appends to calls the calls out turn t made, as effects.
func turnCalls(calls []string, t *runtime.Turn) []string {
	for _, rd := range t.Reads {
		if rd.Kind == runtime.ReadCall {
			calls = append(calls, callEffect(rd.Call))
		}
	}
	return calls
}

// setOthers sets each alternative's others: the operation's calls out
// less the alternative's own.
func (op *hop) setOthers() {
	if len(op.calls) == 0 || op.nalts() == 1 && len(op.calls) == len(turnCalls(nil, op.first.turn)) {
		return // one turn made them all (its replay makes them)
	}
	for i := range op.nalts() {
		a := op.alt(i)
		a.others = slices.Clone(op.calls)
		for _, c := range turnCalls(nil, a.turn) {
			if k := slices.Index(a.others, c); k >= 0 {
				a.others = slices.Delete(a.others, k, k+1)
			}
		}
	}
}

// addTurn adds another executing turn of a call to its operation.
func addTurn(v *runView, op *hop, t *runtime.Turn) {
	op.to = max(op.to, t.Ended)
	op.rest = append(op.rest, alt{turn: t})
	op.calls = turnCalls(op.calls, t)
	if op.turn.Attempt != len(op.call.Attempts) {
		op.turn = t // the later attempt, unless the first is the one whose reply came
	}
}

// finishCall sets what the call's caller saw and the model's step keys,
// once all its turns are in.
func finishCall(v *runView, op *hop) {
	rep, n := op.turn, op.turn.Call
	if len(op.rest) > 0 {
		all := append([]alt{op.first}, op.rest...)
		whole := slices.DeleteFunc(slices.Clone(all), func(a alt) bool { return a.turn.Cut != "" })
		if len(whole) > 0 {
			all = whole
		}
		op.first, op.rest = all[0], all[1:]
	}
	op.maybe = op.first.turn.Cut != "" // no execution ran to its end: it may have taken effect or not
	op.setOthers()
	op.seen = v.Seen[n-1]
	if op.seen.known && (rep.Attempt != len(op.call.Attempts) || rep.Cut != "") {
		op.seen = seen{} // the answer the caller got is not an execution's to its end
	}
	if op.seen.known && op.seen.key == "" && rep.Fetch != nil {
		op.seen.key = fetchKey(rep.Fetch.Status, string(rep.Fetch.RespBody))
	}
	base := ""
	if n-1 < len(v.Inputs) {
		base = v.Inputs[n-1]
	}
	if base == "" {
		base = callInput(op.call.Method, rep.Args)
	}
	for i := range op.nalts() {
		a := op.alt(i)
		a.input = base
		if t := a.turn; t.Fetch != nil || len(t.Reads) > 0 || t.Shared {
			a.input = base + fetchInput(t.Fetch) + readsKey(t)
		}
	}
}

// callInput is a call's step key, without what its turn read.
func callInput(method string, args []any) string { return "R " + method + " " + canonical(args) }

// laneOp is the operation of a background turn: what it did is the events
// it recorded.
func laneOp(t *runtime.Turn) hop {
	op := hop{turn: t, seen: seen{known: true, key: eventsKey(t.Events)}, maybe: t.Cut != "", from: t.Began, to: t.Ended, calls: turnCalls(nil, t)}
	op.first = alt{turn: t, input: "L " + t.Kind.String() + " " + strconv.FormatInt(t.At.UnixNano(), 10) + readsKey(t)}
	if t.Kind == runtime.TurnAlarm && t.Backend == object.SQLiteBacked {
		// its retry's wait is the seed's (rule O6): another seed's step
		// is not this one's
		op.first.input += " seed " + strconv.FormatUint(t.Seed, 10)
	}
	if e := t.WebSocket; e != nil { // what the socket's event delivered (rule W2)
		op.first.input += fmt.Sprintf(" ws %d %q %x %t %t %d %q %t", e.Socket.N, e.Text, e.Data, e.Binary, e.Close, e.Code, e.Reason, e.Clean)
	}
	return op
}

// fetchInput is a fetch's request, as the model's step key.
func fetchInput(x *runtime.FetchExchange) string {
	if x == nil {
		return ""
	}
	return fmt.Sprintf(" %s %q %s %q", x.Method, x.URL, canonical(x.Header), x.Body)
}

// readsKey is what a turn read, as the model's step key.
func readsKey(t *runtime.Turn) string {
	if len(t.Reads) == 0 && !t.Shared {
		return ""
	}
	var b strings.Builder
	b.WriteString(" |")
	if t.Shared {
		b.WriteString(" shared")
	}
	var buf [8]byte
	for _, rd := range t.Reads {
		switch rd.Kind {
		case runtime.ReadClock:
			b.WriteString(" c")
			b.WriteString(strconv.FormatInt(rd.Time.UnixNano(), 10))
		case runtime.ReadRandom:
			binary.BigEndian.PutUint64(buf[:], rd.Value)
			b.WriteString(" r")
			b.WriteString(hex.EncodeToString(buf[:]))
		case runtime.ReadSocket:
			b.WriteString(" s")
			b.WriteString(strconv.FormatUint(rd.Value, 10))
		case runtime.ReadCall:
			b.WriteString(" o")
			b.WriteString(callEffect(rd.Call))
			b.WriteString("=")
			reply := resultKey(rd.Call.Result, nil)
			if rd.Call.Err != nil { // the whole error: its message, attempt and flags are what the turn read
				reply = "err " + rd.Call.Err.Error()
			}
			b.WriteString(strconv.Quote(reply))
		}
	}
	return b.String()
}

// callEffect is a call out as an effect of the calling object.
func callEffect(c *runtime.CallOut) string {
	return "call " + c.Namespace + "/" + c.Object + "." + c.Method + " " + canonical(c.Args)
}

// effectText is a recorded effect as the model's state holds it.
func effectText(kind string, payload any) string { return kind + " " + canonical(payload) }

// eventsKey is what a background turn did, as its observed output: its
// events' kinds and fields, without their times.
func eventsKey(events []object.Event) string {
	parts := make([]string, len(events))
	for i, e := range events {
		parts[i] = string(e.Kind) + " " + e.Text()
	}
	return strings.Join(parts, "\n")
}

// sortedEffects is effects as a multiset: concurrent turns may record them
// in any order.
func sortedEffects(effects []string) []string {
	if len(effects) < 2 {
		return effects
	}
	out := slices.Clone(effects)
	slices.Sort(out)
	return out
}

// webSocketLabel names a WebSocket turn for a person: the socket and what
// reached it.
func webSocketLabel(e *runtime.WebSocketEvent, at time.Duration) string {
	if e.Close {
		return fmt.Sprintf("ws%d close %d at %v", e.Socket.N, e.Code, at)
	}
	if e.Binary {
		return fmt.Sprintf("ws%d message <%d bytes> at %v", e.Socket.N, len(e.Data), at)
	}
	return fmt.Sprintf("ws%d message %q at %v", e.Socket.N, e.Text, at)
}
