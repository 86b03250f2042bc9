package explore

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/dosim/dosim/runtime"
)

// The sequential model of an object is its own class, one operation at a
// time: a state is the object's storage and alarm with the effects and
// calls out it made, and a step replays one operation's turn alone, on a
// fresh instance over that state, at the instant it ran and with what it
// read (runtime.Replay, rule C1). Steps are memoised per (state, input)
// across seeds, so a sweep pays once for each distinct step.
//
// A turn cut short may or may not have taken effect, so the check follows
// a set of possible states (porcupine's state is that set): an operation
// of unknown effect keeps each state and adds its step's; any other keeps
// the steps whose output is what its caller saw. The set stays small:
// its size is capped at maxStates.

// state is an interned model state.
type state struct {
	key     string
	hash    uint64
	st      runtime.ObjectState
	effects []string // sorted: a multiset
}

// stepKey memoises a step.
type stepKey struct {
	from  *state
	input string
}

// stepResult is what one step of the model did.
type stepResult struct {
	out   string
	to    *state
	exact bool   // the replay read what the turn read (runtime.Replayed.Exact)
	why   string // how it did not
}

// verdict is the check's conclusion on one history.
type verdict uint8

const (
	linearizable   verdict = iota + 1
	violation              // no order explains it, every step replayed exactly
	unreproducible         // no exact order explains it, but some step was not exact
	tooManyStates          // the possible states outgrew maxStates
)

// maxStates caps the possible states a check follows.
const maxStates = 256

// defaultMaxVerdicts bounds a model's memo of verdicts: when it is full
// the memo starts again (models.maxVerdicts; 0 turns the memo off).
const defaultMaxVerdicts = 1024

// defaultMaxSteps bounds a model's memo of steps, and with it of states:
// when it is full the memo starts again, so that a sweep whose turns read
// a new instant in every seed (the memo then rarely hits) runs in flat
// memory (rule H2; models.maxSteps).
const defaultMaxSteps = 4096

// maxModels bounds the models a sweep keeps, one per object: a function
// that names its objects after the seed starts them again when it is full.
const maxModels = 256

// model is the memoised sequential model of one object.
type model struct {
	ms        *models
	mu        sync.Mutex
	namespace string
	object    string
	states    map[string]*state
	steps     map[stepKey]stepResult
	verdicts  map[verdictKey]verdict
}

// models holds a model per object, shared by a sweep's workers.
type models struct {
	mu    sync.Mutex
	byObj map[[2]string]*model
	// timed makes the models add up, in replaying, the wall-clock time
	// their replays take (BenchmarkCheckHistory says where the time goes).
	timed     bool
	replaying time.Duration
	// maxVerdicts and maxSteps bound each model's memos of verdicts and
	// of steps (defaultMaxVerdicts, defaultMaxSteps); a test sets others
	// on its explorer's models before a sweep.
	maxVerdicts, maxSteps int
}

func newModels() *models {
	return &models{byObj: map[[2]string]*model{}, maxVerdicts: defaultMaxVerdicts, maxSteps: defaultMaxSteps}
}

func (ms *models) get(namespace, object string) *model {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	k := [2]string{namespace, object}
	m := ms.byObj[k]
	if m == nil {
		if len(ms.byObj) >= maxModels {
			clear(ms.byObj)
		}
		m = &model{ms: ms, namespace: namespace, object: object, states: map[string]*state{},
			steps: map[stepKey]stepResult{}, verdicts: map[verdictKey]verdict{}}
		ms.byObj[k] = m
	}
	return m
}

// intern returns the state for st and effects (sorted).
func (m *model) intern(st runtime.ObjectState, effects []string) *state {
	effects = sortedEffects(effects)
	if st.Storage == nil { // never written and emptied are one state: both are {}
		st.Storage = map[string]any{}
	}
	var buf [256]byte
	b := buf[:0]
	if c, ok := appendCanonical(b, st.Storage); ok {
		b = c
	} else {
		b = append(b, canonical(st.Storage)...)
	}
	if st.Alarm.Set {
		b = fmt.Appendf(b, "|alarm %d %d", st.Alarm.At.UnixNano(), st.Alarm.Retry)
	}
	b = append(b, '|')
	for i, e := range effects {
		if i > 0 {
			b = append(b, '\x1f')
		}
		b = append(b, e...)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.states[string(b)]; s != nil {
		return s
	}
	key := string(b)
	h := fnv.New64a()
	_, _ = io.WriteString(h, key)
	s := &state{key: key, hash: h.Sum64(), st: st, effects: effects}
	m.states[key] = s
	return s
}

// step replays a turn (one alternative of an operation) from s, once per
// (state, input): the replay runs outside the lock, so that workers replay
// different steps at once.
func (m *model) step(ctor runtime.Constructor, s *state, a *alt) stepResult {
	k := stepKey{from: s, input: a.input}
	m.mu.Lock()
	r, ok := m.steps[k]
	m.mu.Unlock()
	if ok {
		return r
	}
	var start time.Time
	if m.ms.timed {
		start = time.Now()
	}
	rep := runtime.Replay(ctor, s.st, *a.turn)
	if m.ms.timed {
		m.ms.mu.Lock()
		m.ms.replaying += time.Since(start)
		m.ms.mu.Unlock()
	}
	effects := slices.Clone(s.effects)
	for _, e := range rep.Effects {
		effects = append(effects, effectText(e.Kind, e.Payload))
	}
	for i := range rep.Calls {
		effects = append(effects, callEffect(&rep.Calls[i]))
	}
	r = stepResult{out: replayedKey(a.turn, rep), exact: rep.Exact, why: rep.Diverged}
	r.to = m.intern(rep.State, effects)
	m.mu.Lock()
	if len(m.steps) >= m.ms.maxSteps {
		// Start again: the states in checks under way stay valid, only
		// unshared (a set compares its members by key).
		m.steps = make(map[stepKey]stepResult)
		m.states = make(map[string]*state)
	}
	m.steps[k] = r
	m.mu.Unlock()
	return r
}

// with returns s with the effects extra added (s itself for none).
func (m *model) with(s *state, extra []string) *state {
	if len(extra) == 0 {
		return s
	}
	return m.intern(s.st, append(slices.Clone(s.effects), extra...))
}

// replayedKey is what a replayed turn answered, as its caller would have
// seen it: a call's result or error, a fetch's response, or for a
// background turn its events.
func replayedKey(t *runtime.Turn, rep runtime.Replayed) string {
	switch {
	case t.Kind != runtime.TurnRequest:
		return eventsKey(rep.Events)
	case t.Fetch != nil && rep.Fetch != nil:
		return fetchKey(rep.Fetch.Status, string(rep.Fetch.RespBody))
	case t.Fetch != nil:
		return resultKey(nil, rep.Err)
	}
	return resultKey(rep.Value, rep.Err)
}

// pset is a set of possible states, interned per check; wild is the set
// a lenient check gives a step it could not replay exactly: anything may
// follow it.
type pset struct {
	members []*state // sorted by key
	key     string
	hash    uint64
	wild    bool
}

// checker is one check of one history against a model.
type checker struct {
	m       *model
	ctor    runtime.Constructor
	lenient bool
	inexact string           // the first step that was not exact, when one was met
	over    bool             // the states outgrew maxStates
	sets    map[string]*pset // made on first use
	endKey  string
}

func (c *checker) set(members []*state) *pset {
	slices.SortFunc(members, func(a, b *state) int { return strings.Compare(a.key, b.key) })
	members = slices.CompactFunc(members, func(a, b *state) bool { return a.key == b.key })
	var b strings.Builder
	h := fnv.New64a()
	var buf [8]byte
	for _, s := range members {
		b.WriteString(s.key)
		b.WriteByte(0)
		binary.LittleEndian.PutUint64(buf[:], s.hash)
		_, _ = h.Write(buf[:])
	}
	if c.sets == nil {
		c.sets = map[string]*pset{}
	}
	if p := c.sets[b.String()]; p != nil {
		return p
	}
	p := &pset{members: members, key: b.String(), hash: h.Sum64()}
	c.sets[p.key] = p
	return p
}

func (c *checker) porcupineModel(init *state) porcupine.Model {
	return porcupine.Model{
		Init:  func() any { return c.set([]*state{init}) },
		Step:  func(st, input, _ any) (bool, any) { return c.step(st.(*pset), input.(*hop)) },
		Equal: func(a, b any) bool { return a.(*pset) == b.(*pset) },
		Hash:  func(s any) uint64 { return s.(*pset).hash },
		DescribeOperation: func(input, _ any) string {
			op := input.(*hop)
			switch {
			case op.final:
				return "end state"
			case op.maybe:
				return op.label() + " -> ? (cut short: may or may not have taken effect)"
			case !op.seen.known:
				return op.label() + " -> ? (its reply was lost)"
			}
			return op.label() + " -> " + op.seen.key
		},
		DescribeState: func(st any) string {
			p := st.(*pset)
			if p.wild {
				return "(not reproducible)"
			}
			parts := make([]string, len(p.members))
			for i, s := range p.members {
				parts[i] = describeState(s)
			}
			return strings.Join(parts, " or ")
		},
	}
}

func (c *checker) step(p *pset, op *hop) (bool, any) {
	if p.wild {
		return true, p
	}
	if op.final {
		for _, s := range p.members {
			if s.key == c.endKey {
				return true, p
			}
		}
		return false, p
	}
	next := make([]*state, 0, len(p.members)+1)
	for _, s := range p.members {
		if op.maybe { // none of its turns took effect, but their calls out were made
			next = append(next, c.m.with(s, op.calls))
		}
		for i := range op.nalts() {
			r := c.m.step(c.ctor, s, op.alt(i))
			if !r.exact {
				if c.inexact == "" {
					c.inexact = op.label() + ": " + r.why
				}
				if c.lenient {
					return true, &pset{wild: true, key: "wild"}
				}
				continue
			}
			if op.seen.known && r.out != op.seen.key {
				continue
			}
			next = append(next, c.m.with(r.to, op.alt(i).others))
		}
	}
	if len(next) == 0 {
		return false, p
	}
	if len(next) > maxStates {
		c.over = true
		return false, p
	}
	return true, c.set(next)
}

func describeState(s *state) string {
	d := canonical(s.st.Storage)
	if s.st.Alarm.Set {
		d += fmt.Sprintf(" alarm at %s (retry %d)", s.st.Alarm.At.Format(time.RFC3339Nano), s.st.Alarm.Retry)
	}
	if len(s.effects) > 0 {
		d += fmt.Sprintf(" effects: %s", strings.Join(s.effects, "; "))
	}
	return d
}
