package explore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
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
}

// Visualize writes porcupine's HTML visualisation of the history.
func (h *History) Visualize(w io.Writer) error {
	pm := h.c.porcupineModel(h.init)
	_, info := porcupine.CheckEventsVerbose(pm, h.Events, 0)
	return porcupine.Visualize(pm, info, w)
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
	v := &runView{Calls: res.Calls, Seen: make([]seen, len(res.Calls)), History: res.History, Effects: res.Effects, Ctors: e.ctors}
	var se *stub.Error
	for _, o := range res.Outcomes {
		if o.Call == nil {
			continue
		}
		for k, idx := range o.Records {
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
	return checkLinear(seed, v, e.models, e.opts.MaxAmbiguous, nil, timeout)
}

// checkLinear checks the history of each object of a run against its
// model. Namespaces in broken have a class that cannot be built.
func checkLinear(seed uint64, v *runView, ms *models, maxCut int, broken map[string]bool, timeout time.Duration) linearReport {
	var rep linearReport
	for _, h := range histories(v, maxCut, broken) {
		if h.skip != "" {
			rep.skip(h.skip)
			continue
		}
		m := ms.get(h.ns, h.name)
		c := &checker{m: m, ctor: h.ctor, sets: map[string]*pset{}}
		c.wild = &pset{wild: true, key: "wild"}
		init := m.intern(h.obj.Initial, nil)
		c.endKey = m.intern(h.obj.Final, h.end).key
		events := historyEvents(h)
		if dbg {
			fmt.Printf("seed %d %s/%s end %s\n", seed, h.ns, h.name, c.endKey)
			for _, op := range h.ops {
				fmt.Printf("   op %s [%d,%d] seen=%+v maybe=%v input=%s\n", op.label, op.from, op.to, op.seen, op.maybe, op.input)
			}
		}
		got := m.verdict(c, init, events, timeout)
		switch got {
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
		obj := h.ns + "/" + h.name
		if rep.histories == nil {
			rep.histories = map[string]*History{}
		}
		rep.histories[obj] = &History{Object: obj, Events: events, c: c, init: init}
		rep.violations = append(rep.violations, Violation{Seed: seed, Kind: KindLinearizability, Object: obj,
			Message: fmt.Sprintf("no order of its %s, each applied once (those cut short at most once), explains what callers saw and its end state %s",
				opsText(h.ops), describeEnd(h))})
	}
	return rep
}

// opsText counts a history's operations for a person: "3 calls", "2
// calls and 1 background turn".
func opsText(ops []*hop) string {
	calls := 0
	for _, op := range ops {
		if op.turn.Kind == 1 { // runtime.TurnRequest
			calls++
		}
	}
	s := plural(calls, "call")
	if bg := len(ops) - calls; bg > 0 {
		s += " and " + plural(bg, "background turn")
	}
	return s
}

// historyEvents orders a history's operations by the stamps of their
// turns, then the end-state read after them all.
func historyEvents(h *objHistory) []porcupine.Event {
	type stamp struct {
		at  uint64
		id  int
		ret bool
	}
	stamps := make([]stamp, 0, 2*len(h.ops)+2)
	var last uint64
	for i, op := range h.ops {
		stamps = append(stamps, stamp{op.from, i, false}, stamp{op.to, i, true})
		last = max(last, op.to)
	}
	n := len(h.ops)
	final := &hop{final: true, label: "end state"}
	stamps = append(stamps, stamp{last + 1, n, false}, stamp{last + 2, n, true})
	slices.SortStableFunc(stamps, func(a, b stamp) int { return cmp.Compare(a.at, b.at) })
	events := make([]porcupine.Event, len(stamps))
	for i, s := range stamps {
		op := final
		if s.id < n {
			op = h.ops[s.id]
		}
		kind := porcupine.CallEvent
		if s.ret {
			kind = porcupine.ReturnEvent
		}
		events[i] = porcupine.Event{ClientId: s.id, Kind: kind, Value: op, Id: s.id}
	}
	return events
}

// verdict checks a history, memoised by all the verdict depends on: the
// initial and end states and the events with their inputs and outputs.
// 0 means the check ran out of its time.
func (m *model) verdict(c *checker, init *state, events []porcupine.Event, timeout time.Duration) verdict {
	key := historyKey(init, c.endKey, events)
	m.mu.Lock()
	v, seen := m.verdicts[key]
	m.mu.Unlock()
	if seen {
		return v
	}
	v = c.run(init, events, timeout)
	if v == 0 {
		return 0
	}
	m.mu.Lock()
	if len(m.verdicts) < maxVerdicts {
		m.verdicts[key] = v
	}
	m.mu.Unlock()
	return v
}

// run is the check itself: strict, then, if no order explains the history
// and some step was not replayed exactly, lenient (such steps explain
// anything) to tell a violation from what cannot be reproduced.
func (c *checker) run(init *state, events []porcupine.Event, timeout time.Duration) verdict {
	check := func() (bool, bool) {
		pm := c.porcupineModel(init)
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

// historyKey is all a history's verdict depends on, unambiguously.
func historyKey(init *state, end string, events []porcupine.Event) string {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(init.key)
	str(end)
	for _, ev := range events {
		op := ev.Value.(*hop)
		b = binary.AppendUvarint(b, uint64(ev.Id))
		if ev.Kind == porcupine.CallEvent {
			if op.final {
				b = append(b, 'F')
			} else {
				b = append(b, 'C')
				str(op.input)
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
	}
	return string(b)
}

// describeEnd is an object's end state for a violation's message.
func describeEnd(h *objHistory) string {
	d := canonical(h.obj.Final.Storage)
	if n := len(h.end); n > 0 {
		d += fmt.Sprintf(" with %s", plural(n, "effect"))
	}
	return d
}
