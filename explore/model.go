package explore

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/anishathalye/porcupine"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// The sequential model of an object is its own class, one operation at a
// time: a state is the object's storage and alarm with the effects and
// calls out it made, and the instance it holds; a step replays one
// operation's turn on that instance, or on a fresh one over the storage
// when the turn ran on another (a reset or an eviction came between), at
// the instant it ran and with what it read (runtime.ReplayAfter, rules C1,
// C2). What an instance keeps in its fields is part of the state: the
// model keeps the turns that instance ran (a runtime.Lineage) and replays
// them to rebuild it, unless a fresh instance over the storage would keep
// the same (runtime.Replayed.Memory). Steps are memoised per (state,
// input) across seeds, so a sweep pays once for each distinct step; a
// step whose replay read past what its turn read, or that leaves an
// instance, is memoised per turn too (stepDetail), so that what a worker
// finds never depends on what another checked first.
//
// A turn cut short may or may not have taken effect, so the check follows
// a set of possible states (porcupine's state is that set): an operation
// of unknown effect keeps each state and adds its step's; any other keeps
// the steps whose output is what its caller saw. The set stays small:
// its size is capped at maxStates.

// state is an interned model state.
type state struct {
	// key is all the state is, its instance's memory included; end is what
	// the read of the end state compares: storage, alarm and effects
	// (endText).
	key, end string
	stored   int // key[:stored] is the storage's canonical text
	// sqlEnd: end is written when first read, from the storage's SQL
	// tables by their rows (sqlContent), then key[stored:effectsEnd].
	// Most states a check meets are never compared with the end state,
	// and writing every one's at once was 2% of a booth seed.
	sqlEnd     bool
	effectsEnd int
	endOnce    sync.Once
	hash       uint64
	st         runtime.ObjectState
	effects    []string // sorted: a multiset
	inst       *instance
}

// endText is what the read of the end state compares of s.
func (s *state) endText() string {
	if s.sqlEnd {
		s.endOnce.Do(func() {
			content, _ := sqlContent(s.st.Storage)
			s.end = canonical(content) + s.key[s.stored:s.effectsEnd]
		})
	}
	return s.end
}

// stepKey memoises a step: from a state, a turn with its input, on the
// state's instance (cont) or on a fresh one, cut short or not (a replay
// refutes the calls out of a turn that was not: runtime.Replayed.Refuted).
type stepKey struct {
	from  *state
	input string
	cont  bool
	cut   bool
}

// stepDetail is what of the turn a step's result depends on besides its
// stepKey, when it does (stepResult.detail): its instant and identity,
// for a replay that read past the turn's own reads, and the instance it
// ran on, for a step that leaves one.
type stepDetail struct {
	at            int64
	call, attempt int
	kind          runtime.TurnKind
	inst          int
}

// detailed is a step memoised per turn.
type detailed struct {
	stepKey
	stepDetail
}

// stepResult is what one step of the model did.
type stepResult struct {
	out   string
	to    *state
	exact bool   // the replay read what the turn read (runtime.Replayed.Exact)
	why   string // how it did not
	// refuted: it made a call out the turn did not make
	// (runtime.Replayed.Refuted): no run went through this step.
	refuted bool
	// open: the replay read past what the turn read (runtime.Replayed.Open);
	// keeps: the step leaves an instance, or ran on one. Either way the
	// result is memoised per turn (stepDetail).
	open, keeps bool
}

// detail is what of turn t the result r depends on besides its stepKey.
func (r stepResult) detail(t *runtime.Turn) (stepDetail, bool) {
	var d stepDetail
	if r.open {
		d.at, d.call, d.attempt, d.kind = t.At.UnixNano(), t.Call, t.Attempt, t.Kind
	}
	if r.keeps {
		d.inst = t.Instance
	}
	return d, r.open || r.keeps
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
	details   map[detailed]stepResult
	verdicts  map[verdictKey]verdictEntry
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
	// taken counts the steps taken from the run's own outcomes (ran);
	// checkRan, set by a test, is shown each such step to compare with
	// its replay.
	taken    atomic.Int64
	checkRan func(m *model, ctor runtime.Constructor, s *state, a *alt, r stepResult)
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
			steps: map[stepKey]stepResult{}, details: map[detailed]stepResult{}, verdicts: map[verdictKey]verdictEntry{}}
		ms.byObj[k] = m
	}
	return m
}

// intern returns the state for st, effects (sorted) and the instance
// inst (nil: none kept).
func (m *model) intern(st runtime.ObjectState, effects []string, inst *instance) *state {
	effects = sortedEffects(effects)
	if st.Storage == nil { // never written and emptied are one state: both are {}
		st.Storage = map[string]any{}
	}
	var buf [256]byte
	b := appendStorage(buf[:0], st.Storage)
	stored := len(b)
	if a := st.Alarm; a.Set {
		b = fmt.Appendf(b, "|alarm %d %d", a.At.UnixNano(), a.Retry)
	}
	b = append(b, '|')
	for i, e := range effects {
		if i > 0 {
			b = append(b, '\x1f')
		}
		b = append(b, e...)
	}
	end := len(b)
	// What the end state does not compare, but a step can read: the rest
	// of the alarm's retry state, and the instance's memory.
	if a := st.Alarm; a.Backoff != 0 || a.Infra || a.GaveUp {
		b = fmt.Appendf(b, "|retry %d %t %t %d", a.Backoff, a.Infra, a.GaveUp, a.At.UnixNano())
	}
	if ws := st.WebSockets; ws != nil { // the WebSockets it holds, which its turns read (rule W1)
		b = fmt.Appendf(b, "|sockets %d", ws.Accepted)
		for _, s := range ws.Open {
			b = fmt.Appendf(b, " %d %q %x", s.N, s.Tags, s.Attachment)
		}
	}
	if inst != nil {
		b = fmt.Appendf(b, "|instance %d %s", inst.n, inst.memory)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.states[string(b)]; s != nil {
		return s
	}
	key := string(b)
	h := fnv.New64a()
	_, _ = io.WriteString(h, key)
	s := &state{key: key, end: key[:end], stored: stored, hash: h.Sum64(), st: st, effects: effects, inst: inst}
	if hasRowids(st.Storage) {
		// SQL tables compare by their rows, not their order or rowids.
		s.end, s.sqlEnd, s.effectsEnd = "", true, end
	}
	m.states[key] = s
	return s
}

// appendStorage appends storage's canonical text to b, as a state's key
// begins.
func appendStorage(b []byte, storage map[string]any) []byte {
	if c, ok := appendCanonical(b, storage); ok {
		return c
	}
	return append(b, canonical(storage)...)
}

// hasRowids reports whether storage holds an SQL table with rowids: one
// sqlContent writes anew.
func hasRowids(storage map[string]any) bool {
	for k, v := range storage {
		if _, ok := rowidTable(k, v); ok {
			return true
		}
	}
	return false
}

// rowidTable is v, the storage entry k, as an SQL table with rowids, if
// it is one.
func rowidTable(k string, v any) (map[string]any, bool) {
	t, isTable := v.(map[string]any)
	return t, isTable && strings.HasPrefix(k, object.SQLSnapshotPrefix) && t["rowids"] != nil
}

// sqlContent is storage with each SQL table as Storage.Snapshot writes
// it: its rows sorted, without rowids. ok is false when storage holds no
// table with rowids (it is its own content then).
func sqlContent(storage map[string]any) (map[string]any, bool) {
	var out map[string]any
	for k, v := range storage {
		t, ok := rowidTable(k, v)
		if !ok {
			continue
		}
		if out == nil {
			out = maps.Clone(storage)
		}
		rows, _ := t["rows"].([]any)
		type row struct {
			text string
			v    any
		}
		byText := make([]row, len(rows))
		for i, r := range rows {
			byText[i] = row{canonical(r), r}
		}
		slices.SortStableFunc(byText, func(a, b row) int { return strings.Compare(a.text, b.text) })
		sorted := make([]any, len(rows))
		for i, r := range byText {
			sorted[i] = r.v
		}
		c := maps.Clone(t)
		delete(c, "rowids")
		delete(c, "rowid")
		c["rows"] = sorted
		out[k] = c
	}
	return out, out != nil
}

// step replays a turn (one alternative of an operation) from s, once per
// (state, input): the replay runs outside the lock, so that workers replay
// different steps at once. A turn on the state's instance runs on the
// session live keeps for s, when it has one, instead of replaying the
// instance's earlier turns again.
func (m *model) step(c *checker, s *state, a *alt) stepResult {
	ctor, live := c.ctor, &c.live
	t := a.turn
	k := stepKey{from: s, input: a.input, cont: s.inst != nil && s.inst.n == t.Instance, cut: t.Cut != ""}
	m.mu.Lock()
	r, ok := m.steps[k]
	if ok {
		if d, more := r.detail(t); more {
			r, ok = m.details[detailed{k, d}]
		}
	}
	m.mu.Unlock()
	if ok {
		return r
	}
	lineage := runtime.Lineage{Base: s.st}
	var on *instance // the instance the turn runs on: nil, a fresh one
	if k.cont {
		on = s.inst
	}
	rep, ran := c.ran(s, a, k)
	var after *runtime.Session
	if !ran {
		// The session of a state whose instance the model does not keep
		// holds one a fresh build gives (runtime.Replayed.Memory).
		session := live.take(s, t.Instance)
		if session == nil && on != nil { // replayed anew from its turns
			lineage = on.lineage()
		}
		rep, after = m.replay(ctor, lineage, t, a.together, session)
	}
	effects := slices.Clone(s.effects)
	for _, e := range rep.Effects {
		effects = append(effects, effectText(e.Kind, e.Payload))
	}
	for i := range rep.Calls {
		effects = append(effects, callEffect(&rep.Calls[i]))
	}
	var inst *instance
	if rep.Memory != "" {
		inst = &instance{n: t.Instance, memory: rep.Memory, base: lineage.Base, last: on.then(t, a.together)}
		if on != nil {
			inst.base = on.base
		}
	}
	out := replayedKey(t, rep)
	if a.together != nil {
		out = groupOut(a, rep)
	}
	r = stepResult{out: out, exact: rep.Exact, why: rep.Diverged, refuted: rep.Refuted, open: rep.Open, keeps: k.cont || inst != nil}
	r.to = m.intern(rep.State, effects, inst)
	live.keep(r.to, after, t.Instance)
	if ran {
		c.noteAfter(&rep, r.to)
		if m.ms.checkRan != nil {
			m.ms.checkRan(m, ctor, s, a, r)
		}
	}
	m.mu.Lock()
	if len(m.steps)+len(m.details) >= m.ms.maxSteps {
		// Start again: the states in checks under way stay valid, only
		// unshared (a set compares its members by key).
		m.steps = make(map[stepKey]stepResult)
		m.details = make(map[detailed]stepResult)
		m.states = make(map[string]*state)
	}
	m.steps[k] = r
	if d, more := r.detail(t); more {
		m.details[detailed{k, d}] = r
	}
	m.mu.Unlock()
	return r
}

// with returns s with the effects extra added (s itself for none).
func (m *model) with(s *state, extra []string) *state {
	if len(extra) == 0 {
		return s
	}
	return m.intern(s.st, append(slices.Clone(s.effects), extra...), s.inst)
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
	// detail: a step the check took was memoised per turn (stepDetail),
	// so its verdict is too.
	detail bool
	// live are the replay sessions the check keeps (liveSessions).
	live liveSessions
	// befores are the canonical texts of the storage the run's turns
	// began with, as the check needed them (beforeKey).
	befores map[unsafe.Pointer]string
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
			if s.endText() == c.endKey {
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
			r := c.m.step(c, s, op.alt(i))
			c.detail = c.detail || r.open || r.keeps
			if r.refuted {
				continue // as an output the caller did not see: no run went so
			}
			if !r.exact {
				if c.inexact == "" {
					c.inexact = op.label() + ": " + r.why
				}
				if c.lenient {
					return true, &pset{wild: true, key: "wild"}
				}
				continue
			}
			if !op.matches(r.out) {
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
	d := describeStorage(s.st.Storage)
	if s.st.Alarm.Set {
		d += fmt.Sprintf(" alarm at %s (retry %d)", s.st.Alarm.At.Format(time.RFC3339Nano), s.st.Alarm.Retry)
	}
	if len(s.effects) > 0 {
		d += fmt.Sprintf(" effects: %s", strings.Join(s.effects, "; "))
	}
	if s.inst != nil {
		d += " instance " + s.inst.memory
	}
	return d
}

// describeStorage is storage for a person: SQL tables as Snapshot writes
// them (rows sorted, no rowids).
func describeStorage(storage map[string]any) string {
	if content, ok := sqlContent(storage); ok {
		return canonical(content)
	}
	return canonical(storage)
}
