package explore

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/dosim/dosim/runtime"
)

// Every linearizability violation says where its history stops being
// explainable (rule C10): porcupine's partial linearizations give the
// longest order of the history's operations that the class explains; the
// first operation left out (by when it began: it could have come next)
// is the one no order of those before it explains, and the model, stepped
// there from the states that order leaves, says what it expected.

// Unexplained is the first operation of a history that no order of the
// operations before it explains (Violation.Unexplained), what the class
// would have done there and what was observed.
type Unexplained struct {
	// Op names the operation: a call as its method and arguments, a
	// background turn by its kind and time, or "the end state" when every
	// operation is explained but not what the object held at the end.
	Op string `json:"op"`
	// Call is the run's number of the call (1-based, as a fault set counts
	// calls); 0 for a background turn or the end state.
	Call int `json:"call,omitempty"`
	// At is the virtual time the operation began ("" for the end state).
	At string `json:"at,omitempty"`
	// Explained counts the operations of the longest order the class
	// explains, of Total.
	Explained int `json:"explained"`
	Total     int `json:"total"`
	// Expected is what the class returns there, from each state the
	// explained operations may leave (for the end state: what it leaves
	// in storage and effects); Observed is what the caller saw (what the
	// object held).
	Expected []string `json:"expected"`
	Observed string   `json:"observed"`
}

// maxExpected bounds the expectations an explanation lists.
const maxExpected = 3

// Text is the explanation for a person, as a violation's message leads
// with it.
func (u *Unexplained) Text() string {
	expected := strings.Join(u.Expected, " or ")
	if u.Op == endStateOp {
		return fmt.Sprintf("every operation is explained (%d of %d), but not the end state: the class leaves %s; the object was left with %s",
			u.Explained, u.Total, expected, u.Observed)
	}
	where := u.Op
	switch {
	case u.Call > 0:
		where += fmt.Sprintf(" (call %d, at %s)", u.Call, u.At)
	case u.At != "":
		where += fmt.Sprintf(" (at %s)", u.At)
	}
	after := fmt.Sprintf("after %d of its %d operations, in the order that explains the most", u.Explained, u.Total)
	switch {
	case u.Total == 1:
		after = "as its only operation"
	case u.Explained == 0:
		after = fmt.Sprintf("as the first of its %d operations", u.Total)
	}
	return fmt.Sprintf("the first operation no order explains is %s: %s, the class answers %s; its caller saw %s",
		where, after, expected, u.Observed)
}

// endStateOp is Unexplained.Op for the end state.
const endStateOp = "the end state"

// explanation is what explains a violating history, apart from the run
// it came from: the operation, by its index in the history's operations
// (their number for the end state), and what the class expected and what
// was observed. The history's memo key determines it, so it is memoised
// beside the verdict (model.explained).
type explanation struct {
	op               int
	explained, total int
	expected         []string
	observed         string
}

// explained is the explanation of h, a history no order explains, for
// the run whose calls are calls: the memoised one when the verdict is
// memoised under key (memo), else explain's, which is memoised there.
func (m *model) explained(c *checker, init *state, h *objHistory, order []stamp, calls []runtime.CallRecord, key verdictKey, memo bool) *Unexplained {
	if memo {
		m.mu.Lock()
		e := m.verdicts[key]
		m.mu.Unlock()
		if e.why != nil {
			return e.why.of(h, calls)
		}
	}
	x := explain(c, init, h, historyEvents(h, order))
	if x == nil {
		return nil
	}
	if memo {
		m.mu.Lock()
		if e, ok := m.verdicts[key]; ok {
			e.why = x
			m.verdicts[key] = e
		}
		m.mu.Unlock()
	}
	return x.of(h, calls)
}

// of is the explanation of h as the run whose calls are calls shows it.
func (x *explanation) of(h *objHistory, calls []runtime.CallRecord) *Unexplained {
	u := &Unexplained{Explained: x.explained, Total: x.total, Expected: slices.Clone(x.expected), Observed: x.observed}
	if x.op == len(h.ops) {
		u.Op = endStateOp
		return u
	}
	op := &h.ops[x.op]
	u.Op, u.At = op.label(), op.turn.Start.String()
	if op.call != nil {
		for i := range calls {
			if &calls[i] == op.call {
				u.Call = i + 1
			}
		}
	}
	return u
}

// explain finds where the history h, which no order explains, stops
// being explainable; nil when porcupine says it is linearizable after all
// (a check that only the lenient pass decided) or the order found does
// not replay.
func explain(c *checker, init *state, h *objHistory, events []porcupine.Event) *explanation {
	defer c.live.close()
	pm := c.porcupineModel(init)
	res, info := porcupine.CheckEventsVerbose(pm, events, 0)
	if res == porcupine.Ok {
		return nil
	}
	parts := info.PartialLinearizations()
	if len(parts) != 1 {
		return nil
	}
	best := longestOrder(parts[0])
	opOf := func(id int) *hop {
		if id == len(h.ops) {
			return finalOp
		}
		return &h.ops[id]
	}
	p := c.set([]*state{init})
	done := make([]bool, len(h.ops)+1)
	for _, id := range best {
		ok, next := c.step(p, opOf(id))
		if !ok {
			return nil
		}
		p, done[id] = next.(*pset), true
	}
	// The first operation left out, by when it began, could have come
	// next: it is the one no order of those before it explains.
	next := -1
	for _, e := range events {
		if e.Kind == porcupine.CallEvent && !done[e.Id] {
			next = e.Id
			break
		}
	}
	if next < 0 || p.wild {
		return nil
	}
	x := &explanation{op: next, explained: min(len(best), len(h.ops)), total: len(h.ops)}
	op := opOf(next)
	if op.final {
		obs := c.m.intern(h.obj.Final, h.end, nil)
		for _, s := range p.members {
			want, got := endDiff(s, obs)
			x.expected, x.observed = appendExpected(x.expected, want), got
		}
		return x
	}
	x.observed = seenText(op)
	for _, s := range p.members {
		for i := range op.nalts() {
			r := c.m.step(c, s, op.alt(i))
			switch {
			case r.refuted:
				x.expected = appendExpected(x.expected, "a call out its turn did not make")
			case !r.exact:
				x.expected = appendExpected(x.expected, "what it cannot reproduce ("+r.why+")")
			default:
				x.expected = appendExpected(x.expected, outText(r.out))
			}
		}
	}
	return x
}

// endDiff is what differs between the end state the class leaves, s, and
// the one the object held, obs: their storage, alarm or effects, each
// only where they differ.
func endDiff(s, obs *state) (want, got string) {
	var ws, gs []string
	if a, b := describeStorage(s.st.Storage), describeStorage(obs.st.Storage); a != b {
		ws, gs = append(ws, "storage "+a), append(gs, "storage "+b)
	}
	if a, b := alarmText(s.st.Alarm), alarmText(obs.st.Alarm); a != b {
		ws, gs = append(ws, a), append(gs, b)
	}
	if a, b := effectsText(s.effects), effectsText(obs.effects); a != b {
		ws, gs = append(ws, a), append(gs, b)
	}
	if len(ws) == 0 {
		return describeState(s), describeState(obs)
	}
	return strings.Join(ws, ", "), strings.Join(gs, ", ")
}

// alarmText is an alarm for a person.
func alarmText(a runtime.AlarmState) string {
	if !a.Set {
		return "no alarm"
	}
	return fmt.Sprintf("an alarm at %s (retry %d)", a.At.Format(time.RFC3339Nano), a.Retry)
}

// effectsText is a multiset of effects for a person.
func effectsText(effects []string) string {
	if len(effects) == 0 {
		return "no effect"
	}
	return fmt.Sprintf("%s: %s", plural(len(effects), "effect"), strings.Join(effects, "; "))
}

// longestOrder is the longest of porcupine's partial linearizations, the
// first in order of their operations' ids among those as long: which one
// porcupine lists first depends on a map's order.
func longestOrder(orders [][]int) []int {
	var best []int
	for _, o := range orders {
		if len(o) > len(best) || (len(o) == len(best) && slices.Compare(o, best) < 0) {
			best = o
		}
	}
	return best
}

// appendExpected adds one expectation, once, up to maxExpected and a
// count of the rest.
func appendExpected(out []string, s string) []string {
	if slices.Contains(out, s) {
		return out
	}
	if len(out) == maxExpected {
		return append(out, "...")
	}
	if len(out) > maxExpected {
		return out
	}
	return append(out, s)
}

// seenText is what op's caller saw, for a person.
func seenText(op *hop) string {
	switch {
	case op.parts != nil:
		return "the answers of turns that ran interleaved"
	case op.maybe && !op.seen.known:
		return "nothing: the turn was cut short (it may or may not have taken effect)"
	case !op.seen.known:
		return "nothing: its reply was lost"
	}
	return outText(op.seen.key)
}

// outText is a model's output key for a person: ok VALUE, err MESSAGE.
func outText(key string) string {
	if v, ok := strings.CutPrefix(key, "ok "); ok {
		return v
	}
	if m, ok := strings.CutPrefix(key, "err "); ok {
		return "the error " + fmt.Sprintf("%q", m)
	}
	return key
}
