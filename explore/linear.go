package explore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/stub"
)

// History is one object's history as the linearizability check saw it.
type History struct {
	Object string
	Events []porcupine.Event
	c      *checker
	init   *state
	end    string // what the object was left with, for a person
}

// Visualize writes the history's linearizability page: porcupine's
// visualisation, each operation labelled short (linear_page.go).
func (h *History) Visualize(w io.Writer) error {
	defer h.c.live.close()
	return visualize(w, h.c.porcupineModel(h.init), h.Events, h.end)
}

// linearReport is what the linearizability check of one run found.
type linearReport struct {
	violations []Violation
	histories  map[string]*History
	// checked counts the histories checked; unchecked those not, by
	// reason (the Reason constants).
	checked   int
	unchecked map[string]int
	// timedOut: a check ran out of its time, so the run's verdict is
	// unknown (only when check was given a time limit).
	timedOut bool
}

func (r *linearReport) skip(reason string) {
	if r.unchecked == nil {
		r.unchecked = map[string]int{}
	}
	r.unchecked[reason]++
}

// linearizable checks every object's history of a scenario's run. With a
// timeout (> 0; shrinking only, where the wall clock may stop work but
// not decide a verdict), a check that takes longer stops and the report
// says it timed out.
func (e *Explorer) linearizable(seed uint64, res *scenario.Result, timeout time.Duration) linearReport {
	v := &runView{Calls: res.Calls, Seen: make([]seen, len(res.Calls)), Inputs: make([]string, len(res.Calls)),
		History: res.History, Effects: res.Effects, Ctors: e.ctors}
	// A call the scenario did not make (an object's call to another, in a
	// turn of the steps or of the late work) was seen by the turn that
	// made it: its record says what it got.
	for i := range res.Calls {
		v.Seen[i] = recordSeen(&res.Calls[i])
	}
	var se *stub.Error
	for _, o := range res.Outcomes {
		if o.Call == nil {
			continue
		}
		for k, idx := range o.Records {
			v.Inputs[idx] = e.inputs[o.Call.Index]
			err := o.Errs[k]
			switch {
			case err == nil && o.Call.Fetch != nil:
				v.Seen[idx] = seen{known: true, key: fetchKey(o.Status, o.Body)}
			case err == nil:
				v.Seen[idx] = seen{known: true, key: resultKey(o.Value, nil)}
			case errors.As(err, &se) && se.Remote:
				v.Seen[idx] = seen{known: true, key: resultKey(nil, err)}
			}
		}
	}
	return checkLinear(seed, v, e.models, e.opts.MaxAmbiguous, nil, e.opts.Interleaving, timeout)
}

// checkLinear checks the history of each object of a run against its
// model. Namespaces in broken have a class that cannot be built; the
// turns interleave names are meant to interleave at their awaits.
func checkLinear(seed uint64, v *runView, ms *models, maxCut int, broken map[string]bool, interleave declared, timeout time.Duration) linearReport {
	var rep linearReport
	calls := v.Calls
	hs := histories(v, maxCut, broken)
	for i := range hs {
		h := &hs[i]
		if h.skip != "" {
			rep.skip(h.skip)
			continue
		}
		m := ms.get(h.ns, h.name)
		c := &checker{m: m, ctor: h.ctor}
		init := m.intern(h.obj.Initial, nil, nil)
		c.endKey = m.intern(h.obj.Final, h.end, nil).endText()
		order := orderOps(h)
		v, key, memo := m.verdict(c, init, h, order, timeout)
		kind := KindLinearizability
		if v == violation || v == unreproducible {
			// An interleaving at an await as it ran may explain what no order
			// of atomic steps does (interleave.go).
			explained, undeclared, out := interleaved(m, c, init, h, interleave, timeout)
			switch {
			case out:
				v = 0
			case explained && len(undeclared) == 0: // as declared
				v = linearizable
			case explained && v == violation:
				kind = KindInterleaving
			}
		}
		switch v {
		case 0:
			rep.timedOut = true
			continue
		case linearizable:
			rep.checked++
			continue
		case unreproducible:
			rep.skip(ReasonUnreproducible)
			continue
		case tooManyStates:
			rep.skip(ReasonStates)
			continue
		}
		rep.checked++
		msg := fmt.Sprintf("no order of its %s, each applied once (those cut short at most once), explains what callers saw and its end state %s",
			opsText(h.ops), describeEnd(h))
		var u *Unexplained
		switch kind {
		case KindInterleaving:
			groups, _ := interleavings(h)
			msg = interleavingText(h, undeclaredOf(h, groups, interleave))
		default:
			// Rule C10: lead with the first operation no order explains.
			if u = m.explained(c, init, h, order, calls, key, memo); u != nil {
				msg = fmt.Sprintf("%s (no order of its %s, each applied once, those cut short at most once, explains the whole history)", u.Text(), opsText(h.ops))
			}
		}
		obj := h.ns + "/" + h.name
		if rep.histories == nil {
			rep.histories = map[string]*History{}
		}
		end := describeStorage(h.obj.Final.Storage)
		if len(h.end) > 0 {
			end += ", effects: " + strings.Join(h.end, "; ")
		}
		rep.histories[obj] = &History{Object: obj, Events: historyEvents(h, order), c: c, init: init, end: end}
		rep.violations = append(rep.violations, Violation{Seed: seed, Kind: kind, Object: obj, Message: msg, Unexplained: u})
	}
	return rep
}

// interleaved checks a history no order of atomic steps explains again,
// with its turns that ran interleaved at their awaits replayed as they ran
// (see interleave.go): explained says that check passed, undeclared are
// its groups whose turns are not declared meant to interleave, and out
// that the check ran out of its time.
func interleaved(m *model, c *checker, init *state, h *objHistory, interleave declared, timeout time.Duration) (explained bool, undeclared []awaitGroup, out bool) {
	groups, ok := interleavings(h)
	if !ok || len(groups) == 0 {
		return false, nil, false
	}
	g := h.interleaved(groups)
	switch v, _, _ := m.verdict(&checker{m: m, ctor: c.ctor, endKey: c.endKey}, init, g, orderOps(g), timeout); v {
	case 0:
		return false, nil, true
	case linearizable:
		return true, undeclaredOf(h, groups, interleave), false
	}
	return false, nil, false
}

// undeclaredOf are the groups whose turns are not all declared meant to
// interleave: a group is declared when its turn that let the others in is.
func undeclaredOf(h *objHistory, groups []awaitGroup, interleave declared) []awaitGroup {
	var out []awaitGroup
	for _, g := range groups {
		waiters := 0
		for _, i := range append([]int{g.head}, g.in...) {
			if slices.Contains(h.ops[i].first.turn.Awaits, g.at) && interleave.has(h.ns, &h.ops[i]) {
				waiters++
			}
		}
		if waiters == 0 {
			out = append(out, g)
		}
	}
	return out
}

// opsText counts a history's operations for a person: "3 calls", "2
// calls and 1 background turn".
func opsText(ops []hop) string {
	calls := 0
	for i := range ops {
		if ops[i].call != nil {
			calls++
		}
	}
	s := plural(calls, "call")
	if bg := len(ops) - calls; bg > 0 {
		s += " and " + plural(bg, "background turn")
	}
	return s
}

// stamp is one event of a history: the start (or the end, ret) of the
// id-th operation, or of the end-state read when id is the number of
// operations; at orders them.
type stamp struct {
	at  uint64
	id  int32
	ret bool
}

// orderOps orders a history's operations by the stamps of their turns
// (each is unique), then the end-state read after them all.
func orderOps(h *objHistory) []stamp {
	stamps := make([]stamp, 0, 2*len(h.ops)+2)
	var last uint64
	for i := range h.ops {
		op := &h.ops[i]
		stamps = append(stamps, stamp{op.from, int32(i), false}, stamp{op.to, int32(i), true})
		last = max(last, op.to)
	}
	n := int32(len(h.ops))
	stamps = append(stamps, stamp{last + 1, n, false}, stamp{last + 2, n, true})
	slices.SortFunc(stamps, func(a, b stamp) int { return cmp.Compare(a.at, b.at) })
	return stamps
}

// finalOp is the read of the end state that ends every history.
var finalOp = &hop{final: true}

// historyEvents makes porcupine's events of a history, in order.
func historyEvents(h *objHistory, order []stamp) []porcupine.Event {
	events := make([]porcupine.Event, len(order))
	for i, s := range order {
		op := finalOp
		if int(s.id) < len(h.ops) {
			op = &h.ops[s.id]
		}
		kind := porcupine.CallEvent
		if s.ret {
			kind = porcupine.ReturnEvent
		}
		events[i] = porcupine.Event{ClientId: int(s.id), Kind: kind, Value: op, Id: int(s.id)}
	}
	return events
}

// verdict checks a history, memoised by all the verdict depends on: the
// initial and end states and the operations in order with their inputs
// and outputs, kept as a 128-bit hash so that the memo's size does not grow
// with the histories'. A check one of whose steps was memoised per turn
// (stepDetail) is memoised with its turns' details too. 0 means the check
// ran out of its time. key is where the verdict is memoised (ok false: it
// is not), for what else depends on the same (explanation).
func (m *model) verdict(c *checker, init *state, h *objHistory, order []stamp, timeout time.Duration) (v verdict, key verdictKey, ok bool) {
	var buf [512]byte
	b := historyKey(buf[:0], init, c.endKey, h, order)
	key = verdictKeyOf(b)
	m.mu.Lock()
	e, seen := m.verdicts[key]
	m.mu.Unlock()
	if seen && e.detail {
		key = verdictKeyOf(historyDetails(b, h))
		m.mu.Lock()
		e, seen = m.verdicts[key]
		m.mu.Unlock()
	}
	if seen {
		return e.v, key, true
	}
	v = c.run(init, historyEvents(h, order), timeout)
	c.live.close()
	if v == 0 {
		return 0, key, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := m.ms.maxVerdicts
	if limit <= 0 {
		return v, key, false
	}
	if len(m.verdicts)+2 > limit {
		clear(m.verdicts) // start again: flat memory (rule H2)
	}
	if !c.detail {
		key = verdictKeyOf(b)
		m.verdicts[key] = verdictEntry{v: v}
		return v, key, true
	}
	m.verdicts[verdictKeyOf(b)] = verdictEntry{detail: true}
	key = verdictKeyOf(historyDetails(b, h))
	m.verdicts[key] = verdictEntry{v: v}
	return v, key, true
}

// verdictEntry is a memoised verdict, or, with detail, the mark that the
// history's verdict is memoised per its turns' details (historyDetails);
// why, once a violation was explained, its explanation (rule C10).
type verdictEntry struct {
	v      verdict
	detail bool
	why    *explanation
}

// historyDetails appends to b, a history's key, its turns' details: what
// a step memoised per turn depends on (stepDetail).
func historyDetails(b []byte, h *objHistory) []byte {
	b = append(b, 'D')
	for i := range h.ops {
		op := &h.ops[i]
		for k := range op.nalts() {
			t := op.alt(k).turn
			b = binary.AppendVarint(b, t.At.UnixNano())
			b = binary.AppendUvarint(b, uint64(t.Call))
			b = binary.AppendUvarint(b, uint64(t.Attempt))
			b = append(b, byte(t.Kind))
			b = binary.AppendUvarint(b, uint64(t.Instance))
		}
	}
	return b
}

// verdictKey is a history's key in the memo of verdicts: two 64-bit hashes
// of it with seeds of their own, so that a collision, which would give one
// history another's verdict, is as unlikely as a 128-bit one.
type verdictKey [2]uint64

// verdictSeeds are verdictKeyOf's seeds: random, but the memo lives and
// dies with the process, so no output depends on them.
var verdictSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func verdictKeyOf(b []byte) verdictKey {
	return verdictKey{maphash.Bytes(verdictSeeds[0], b), maphash.Bytes(verdictSeeds[1], b)}
}

// run is the check itself: strict, then, if no order explains the history
// and some step was not replayed exactly, lenient (such steps explain
// anything) to tell a violation from what cannot be reproduced.
func (c *checker) run(init *state, events []porcupine.Event, timeout time.Duration) verdict {
	check := func() (bool, bool) {
		pm := c.porcupineModel(init)
		if inOrder(events) {
			return stepInOrder(pm, events), false
		}
		if timeout > 0 {
			switch porcupine.CheckEventsTimeout(pm, events, timeout) {
			case porcupine.Unknown:
				return false, true
			case porcupine.Illegal:
				return false, false
			}
			return true, false
		}
		return porcupine.CheckEvents(pm, events), false
	}
	ok, out := check()
	switch {
	case out:
		return 0
	case ok:
		return linearizable
	case c.over:
		return tooManyStates
	case c.inexact == "":
		return violation
	}
	c.lenient = true
	defer func() { c.lenient = false }()
	ok, out = check()
	switch {
	case out:
		return 0
	case ok:
		return unreproducible
	}
	return violation
}

// historyKey appends to b all a history's verdict depends on,
// unambiguously.
func historyKey(b []byte, init *state, end string, h *objHistory, order []stamp) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(init.key)
	str(end)
	for _, s := range order {
		b = binary.AppendUvarint(b, uint64(s.id))
		if int(s.id) == len(h.ops) {
			b = append(b, 'F')
			continue
		}
		op := &h.ops[s.id]
		if !s.ret {
			b = append(b, 'C')
			b = binary.AppendUvarint(b, uint64(op.nalts()))
			for i := range op.nalts() {
				str(op.alt(i).input)
			}
			if len(op.calls) > 0 { // the calls out it may add (hop.calls, alt.others)
				b = binary.AppendUvarint(b, uint64(len(op.calls)))
				for _, c := range op.calls {
					str(c)
				}
			}
			continue
		}
		flags := byte('R')
		if op.seen.known {
			flags |= 0x80
		}
		if op.maybe {
			flags |= 0x40
		}
		b = append(b, flags)
		str(op.seen.key)
		if op.parts != nil { // a group's turns, each as its caller saw it
			b = binary.AppendUvarint(b, uint64(len(op.parts)))
			for _, p := range op.parts {
				b = append(b, map[bool]byte{true: 'k', false: 'u'}[p.known])
				str(p.key)
			}
		}
	}
	return b
}

// describeEnd is an object's end state for a violation's message.
func describeEnd(h *objHistory) string {
	d := describeStorage(h.obj.Final.Storage)
	if n := len(h.end); n > 0 {
		d += fmt.Sprintf(" with %s", plural(n, "effect"))
	}
	return d
}
