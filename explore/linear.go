package explore

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/stub"
)

// The sequential model of an object is its own class, run one call at a
// time: a state is the object's storage and the effects it recorded, and a
// step runs one call on a fresh instance built over that storage. Steps are
// memoised per (state, call), across seeds, so a sweep pays for each
// distinct step once.

// state is an interned model state.
type state struct {
	key     string // canonical storage and effects
	hash    uint64
	storage map[string]any
	effects []string // "kind payload", in the order recorded
}

// rec is one call record of an object's history.
type rec struct {
	op   *op
	out  outcome
	from uint64
	to   uint64
}

// finalOp is the read of an object's end state that ends every history.
var finalOp = &op{final: true, label: "end state"}

// op is a call as the model sees it.
type op struct {
	key    string // canonical method and arguments
	method string
	args   []any
	fetch  *scenario.Fetch
	final  bool   // the read of the end state
	label  string // for a person
}

// outcome is what a call returned, as the model compares it.
type outcome struct {
	unknown  bool   // failed ambiguously: may or may not have taken effect
	noEffect bool   // failed before the method ran (no attempt executed): no effect
	key      string // "ok VALUE" or "err MESSAGE"; for the final read, the end state's key
}

type stepKey struct {
	from  *state
	input string
}

type stepResult struct {
	out string
	to  *state
}

// model is the memoised sequential model of one object of one class.
type model struct {
	mu        sync.Mutex
	namespace string
	object    string
	ctor      runtime.Constructor
	states    map[string]*state
	steps     map[stepKey]stepResult
	// verdicts memoises porcupine's verdict by history (historyKey): a
	// verdict is a function of the history alone, since steps are, and a
	// sweep meets the same few histories seed after seed. At most
	// maxVerdicts are kept, so memory does not grow with the seeds.
	verdicts map[string]bool
	pm       porcupine.Model // m's porcupine model, made once
}

// maxVerdicts bounds a model's memo of verdicts; histories beyond it are
// checked by porcupine every time. (A variable for the test that turns
// the memo off.)
var maxVerdicts = 1024

// models holds a model per object, shared by a sweep's workers.
type models struct {
	mu    sync.Mutex
	ctors map[string]runtime.Constructor
	byObj map[[2]string]*model // by namespace and object
}

func newModels(ctors map[string]runtime.Constructor) *models {
	return &models{ctors: ctors, byObj: map[[2]string]*model{}}
}

// learn registers a namespace's constructor if none is known yet (an
// explored function names its namespaces as it runs).
func (ms *models) learn(namespace string, ctor runtime.Constructor) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if _, ok := ms.ctors[namespace]; !ok {
		ms.ctors[namespace] = ctor
	}
}

func (ms *models) get(namespace, object string) *model {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	k := [2]string{namespace, object}
	m := ms.byObj[k]
	if m == nil {
		m = &model{namespace: namespace, object: object, ctor: ms.ctors[namespace],
			states: map[string]*state{}, steps: map[stepKey]stepResult{}, verdicts: map[string]bool{}}
		m.pm = m.porcupineModel()
		ms.byObj[k] = m
	}
	return m
}

// canonical renders v deterministically (maps with sorted keys): as
// json.Marshal does, or with %#v when it cannot.
func canonical(v any) string {
	if b, ok := appendCanonical(nil, v); ok {
		return string(b)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// appendCanonical appends json.Marshal's bytes for the values every seed
// meets (nil, booleans, integers, plain strings, and slices and
// string-keyed maps of them) without its reflection; ok is false for any
// other value, which canonical leaves to json.Marshal.
func appendCanonical(b []byte, v any) (_ []byte, ok bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case string:
		if !plainJSON(x) {
			return b, false
		}
		b = append(b, '"')
		b = append(b, x...)
		return append(b, '"'), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendCanonical(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		var keys [8]string
		ks := keys[:0]
		for k := range x {
			if !plainJSON(k) {
				return b, false
			}
			ks = append(ks, k)
		}
		slices.Sort(ks)
		b = append(b, '{')
		for i, k := range ks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, '"', ':')
			if b, ok = appendCanonical(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// plainJSON reports whether json.Marshal writes s as itself in quotes:
// printable ASCII, with none of the characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// intern returns the state for storage and effects. Callers hold m.mu.
func (m *model) intern(storage map[string]any, effects []string) *state {
	var buf [256]byte
	b := buf[:0]
	if c, ok := appendCanonical(b, storage); ok {
		b = c
	} else {
		b = append(b, canonical(storage)...)
	}
	b = append(b, '|')
	sorted := effects
	if len(effects) > 1 {
		sorted = slices.Clone(effects)
		sort.Strings(sorted) // effects compare as a multiset: concurrent calls may record them in any order
	}
	for i, e := range sorted {
		if i > 0 {
			b = append(b, '\x1f')
		}
		b = append(b, e...)
	}
	if s := m.states[string(b)]; s != nil {
		return s
	}
	key := string(b)
	h := fnv.New64a()
	_, _ = io.WriteString(h, key)
	s := &state{key: key, hash: h.Sum64(), storage: storage, effects: effects}
	m.states[key] = s
	return s
}

func (m *model) initial() *state {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.intern(map[string]any{}, nil)
}

// step runs o on a fresh instance over s's storage.
func (m *model) step(s *state, o *op) stepResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := stepKey{from: s, input: o.key}
	if r, ok := m.steps[k]; ok {
		return r
	}
	r := m.run(s, o)
	m.steps[k] = r
	return r
}

// run executes one call sequentially. Callers hold m.mu.
func (m *model) run(s *state, o *op) stepResult {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace(m.namespace, m.ctor)
	id := ns.IDFromName(m.object)
	if err := ns.Storage(id).Restore(s.storage); err != nil {
		return stepResult{out: "err model: " + err.Error(), to: s}
	}
	st, err := ns.Get(id, stub.MaxRetries(0))
	if err != nil {
		return stepResult{out: "err model: " + err.Error(), to: s}
	}
	var out string
	runErr := rt.Run(func(ctx context.Context) error {
		if o.fetch != nil {
			out = fetchOutcome(ctx, st, o.fetch)
			return nil
		}
		v, err := st.Call(ctx, o.method, o.args...)
		out = resultKey(v, err)
		return nil
	})
	if runErr != nil {
		out = "err model: " + runErr.Error()
	}
	effects := slices.Clone(s.effects)
	for _, e := range rt.Effects() {
		effects = append(effects, e.Kind+" "+canonical(e.Payload))
	}
	return stepResult{out: out, to: m.intern(ns.Storage(id).Snapshot(), effects)}
}

func fetchOutcome(ctx context.Context, st *stub.Stub, f *scenario.Fetch) string {
	req, err := f.Request()
	if err != nil {
		return "err " + err.Error()
	}
	resp, err := st.Fetch(ctx, req.WithContext(ctx))
	if err != nil {
		return resultKey(nil, err)
	}
	return fetchKey(resp.StatusCode, readBody(resp))
}

func readBody(resp *http.Response) string {
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return string(b)
}

func fetchKey(status int, body string) string { return fmt.Sprintf("ok %d %q", status, body) }

// resultKey renders what a call returned: its value, or the object's own
// error text (without the attempt it came from).
func resultKey(v any, err error) string {
	if err == nil {
		var buf [64]byte
		if b, ok := appendCanonical(append(buf[:0], "ok "...), v); ok {
			return string(b)
		}
		return "ok " + canonical(v)
	}
	var e *stub.Error
	if errors.As(err, &e) {
		return "err " + e.Msg
	}
	return "err " + err.Error()
}

// porcupineModel adapts m for porcupine.
func (m *model) porcupineModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return m.initial() },
		Step: func(st, input, output any) (bool, any) {
			s, o, out := st.(*state), input.(*op), output.(*outcome)
			if o.final {
				return s.key == out.key, s
			}
			if out.noEffect {
				return true, s
			}
			r := m.step(s, o)
			if out.unknown {
				return true, r.to
			}
			return r.out == out.key, r.to
		},
		Equal: func(a, b any) bool { return a.(*state) == b.(*state) },
		Hash:  func(s any) uint64 { return s.(*state).hash },
		DescribeOperation: func(input, output any) string {
			o, out := input.(*op), output.(*outcome)
			switch {
			case o.final:
				return "end state"
			case out.unknown:
				return o.label + " -> ? (ambiguous)"
			case out.noEffect:
				return o.label + " -> failed before it ran"
			}
			return o.label + " -> " + out.key
		},
		DescribeState: func(st any) string { return describeState(st.(*state)) },
	}
}

func describeState(s *state) string {
	d := canonical(s.storage)
	if len(s.effects) > 0 {
		d += fmt.Sprintf(" effects: %s", strings.Join(s.effects, "; "))
	}
	return d
}

// History is one object's history as the linearizability check saw it.
type History struct {
	Object string
	Events []porcupine.Event
	model  *model
}

// Visualize writes porcupine's HTML visualisation of the history.
func (h *History) Visualize(w io.Writer) error {
	pm := h.model.porcupineModel()
	_, info := porcupine.CheckEventsVerbose(pm, h.Events, 0)
	return porcupine.Visualize(pm, info, w)
}

// linearReport is what the linearizability check of one run found.
type linearReport struct {
	violations []Violation
	histories  map[string]*History
	// checked counts the histories checked; skipped those with too many
	// ambiguous calls; background those of objects whose background work
	// ran (see backgroundWork).
	checked, skipped, background int
	// timedOut: a check ran out of its time, so the run's verdict is
	// unknown (only when check was given a time limit).
	timedOut bool
}

// ReasonBackground says why a history with background work, or of an
// object that called other objects, is not checked for linearizability.
const ReasonBackground = "alarms, schedules or queues ran outside the calls; or the object called other objects: " +
	"the one-call-at-a-time model of the class alone cannot place that background work"

// backgroundWork reports whether an object did work of its own outside
// the calls of its history: an alarm delivered, a scheduled or queued task
// run (rule A6), a task kept in its storage, or an effect recorded outside
// a request. Such work runs in its own tasks after the call that asked
// for it has returned, at times and with retry delays the sequential model
// (one call at a time, each run to the end) does not reproduce; so the
// history is not checked rather than reported as a violation nobody made.
//
// An object whose methods called other objects is left unchecked too: the
// model replays its calls against its class alone, and cannot reproduce
// what the other objects answered or did.
func backgroundWork(res *runView, ns, name string) bool {
	if _, called := slices.BinarySearch(res.Callers, ns+"/"+name); called {
		return true
	}
	for _, ev := range res.Events {
		if ev.Namespace == ns && ev.Object == name && backgroundEvent(ev.Kind) {
			return true
		}
	}
	for _, ef := range res.Effects {
		if ef.Namespace == ns && ef.Object == name && ef.RequestID == "" {
			return true
		}
	}
	for _, o := range res.Storage {
		if o.Namespace != ns || o.Object != name {
			continue
		}
		for k := range o.Data {
			if strings.HasPrefix(k, object.ReservedPrefix) && !strings.HasPrefix(k, object.SQLSnapshotPrefix) {
				return true // a stored task (SQL tables are state, rule Q2)
			}
		}
	}
	return false
}

// backgroundEvent reports whether an event kind is work of an object's
// alarm, schedule or queue lane (not a Retry inside a call).
func backgroundEvent(kind string) bool {
	switch kind {
	case object.EventAlarm, object.EventAlarmRetry, object.EventAlarmGaveUp,
		object.EventTaskRun, object.EventTaskDone, object.EventTaskError,
		object.EventDeadLetter, object.EventRedrive:
		return true
	}
	return false
}

// runView is what the linearizability check reads of a run, whether a
// scenario's or an explored function's.
type runView struct {
	Calls   []runtime.CallRecord
	Events  []runtime.Event
	Effects []runtime.Effect
	Storage []render.Object
	// Callers are the objects whose methods called other objects
	// (runtime.Runtime.Callers), sorted.
	Callers []string
}

// linCall is one call record with what the model replays and what the
// caller saw.
type linCall struct {
	idx int // in runView.Calls
	op  *op
	out outcome
}

// linearizable checks every object's history of a scenario's run. With a
// timeout (> 0; shrinking only, where the wall clock may stop work but
// not decide a verdict), a check that takes longer stops and the report
// says it timed out.
func (e *Explorer) linearizable(seed uint64, res *scenario.Result, timeout time.Duration) linearReport {
	calls := make([]linCall, 0, len(res.Calls))
	var se *stub.Error
	for _, o := range res.Outcomes {
		if o.Call == nil {
			continue
		}
		in := e.ops[o.Call.Index]
		for k, idx := range o.Records {
			var out outcome
			err := o.Errs[k]
			switch {
			case err == nil && o.Call.Fetch != nil:
				out.key = fetchKey(o.Status, o.Body)
			case err == nil:
				out.key = resultKey(o.Value, nil)
			case errors.As(err, &se) && se.Remote:
				out.key = resultKey(nil, err)
			default:
				out.unknown = true // it may or may not have taken effect
			}
			calls = append(calls, linCall{idx: idx, op: in, out: out})
		}
	}
	view := &runView{Calls: res.Calls, Events: res.Events, Effects: res.Effects, Storage: res.Storage, Callers: res.Callers()}
	return checkLinear(seed, view, calls, nil, e.models, e.opts.MaxAmbiguous, timeout)
}

// checkLinear checks the history of each object the calls reach against
// its model. Objects in unchecked (by "NS/OBJECT") are counted as skipped.
func checkLinear(seed uint64, res *runView, calls []linCall, unchecked map[string]bool, ms *models, maxAmbiguous int, timeout time.Duration) linearReport {
	// The calls by object, in the order objects are first called. A run
	// reaches few objects: they are found by a scan, and by a map only
	// past a few.
	type objCalls struct {
		ns, name string
		recs     []rec
	}
	var (
		objs  []objCalls
		index map[[2]string]int
	)
	const scanObjects = 8
	for _, lc := range calls {
		cr := &res.Calls[lc.idx]
		at := -1
		if index != nil {
			if i, ok := index[[2]string{cr.Namespace, cr.Object}]; ok {
				at = i
			}
		} else {
			for i := range objs {
				if objs[i].name == cr.Object && objs[i].ns == cr.Namespace {
					at = i
					break
				}
			}
		}
		if at < 0 {
			at = len(objs)
			objs = append(objs, objCalls{ns: cr.Namespace, name: cr.Object})
			if index != nil {
				index[[2]string{cr.Namespace, cr.Object}] = at
			} else if len(objs) > scanObjects {
				index = make(map[[2]string]int, 2*len(objs))
				for i, h := range objs {
					index[[2]string{h.ns, h.name}] = i
				}
			}
		}
		objs[at].recs = append(objs[at].recs, rec{op: lc.op, out: lc.out, from: cr.Began, to: cr.Ended})
	}
	var rep linearReport
	for _, oh := range objs {
		recs, ns, name := oh.recs, oh.ns, oh.name
		if backgroundWork(res, ns, name) {
			rep.background++
			continue
		}
		if len(unchecked) > 0 && unchecked[ns+"/"+name] {
			rep.skipped++
			continue
		}
		ambiguous := 0
		var last uint64
		for _, r := range recs {
			if r.out.unknown {
				ambiguous++
			}
			last = max(last, r.to)
		}
		if ambiguous > maxAmbiguous {
			rep.skipped++
			continue
		}
		rep.checked++
		m := ms.get(ns, name)
		n := len(recs)
		// The history is ordered and keyed on the stack (when short);
		// porcupine's events are made only when the verdict is not
		// memoised, or the history is kept.
		var (
			outBuf   [smallHistory/2 + 1]outcome
			stampBuf [smallHistory]stamp
		)
		outs, stamps := outBuf[:0], stampBuf[:0]
		for _, r := range recs {
			outs = append(outs, r.out)
		}
		outs = append(outs, outcome{key: endKey(m, res, ns, name)})
		for i, r := range recs {
			stamps = append(stamps, stamp{at: r.from, id: i})
			ret := stamp{at: r.to, id: i, ret: true}
			if r.out.unknown {
				ret.at = last + 3 // an ambiguous return: after everything
			}
			stamps = append(stamps, ret)
		}
		stamps = append(stamps, stamp{at: last + 1, id: n}, stamp{at: last + 2, id: n, ret: true})
		slices.SortStableFunc(stamps, func(a, b stamp) int { return cmp.Compare(a.at, b.at) })
		h := history{recs: recs, outs: outs, stamps: stamps}
		ok := true
		if timeout > 0 {
			switch porcupine.CheckEventsTimeout(m.pm, h.events(), timeout) {
			case porcupine.Unknown:
				rep.timedOut = true
			case porcupine.Illegal:
				ok = false
			}
		} else {
			ok = m.linearizable(&h)
		}
		if !ok {
			obj := ns + "/" + name
			if rep.histories == nil {
				rep.histories = map[string]*History{}
			}
			rep.histories[obj] = &History{Object: obj, Events: h.events(), model: m}
			rep.violations = append(rep.violations, Violation{Seed: seed, Kind: KindLinearizability, Object: obj,
				Message: fmt.Sprintf("no order of its %d calls, each applied once (ambiguous ones at most once), explains what callers saw and its end state %s",
					len(recs), describeEnd(res, ns, name))})
		}
	}
	return rep
}

// smallHistory is how many events a history may have and still be
// ordered and keyed on the stack.
const smallHistory = 16

// stamp is one event of a history: the call (or its return, ret) of the
// id-th record, or of the end-state read when id is the number of
// records; at is the virtual time it is ordered by.
type stamp struct {
	at  uint64
	id  int
	ret bool
}

// history is one object's history, ordered: its records, their outcomes
// and the end state's (last), and its events as stamps.
type history struct {
	recs   []rec
	outs   []outcome
	stamps []stamp
}

// op is the call of the id-th record, or the end-state read.
func (h *history) op(id int) *op {
	if id == len(h.recs) {
		return finalOp
	}
	return h.recs[id].op
}

// events makes porcupine's events of the history, on the heap.
func (h *history) events() []porcupine.Event {
	outs := slices.Clone(h.outs)
	events := make([]porcupine.Event, len(h.stamps))
	for i, s := range h.stamps {
		if s.ret {
			events[i] = porcupine.Event{ClientId: s.id, Kind: porcupine.ReturnEvent, Value: &outs[s.id], Id: s.id}
		} else {
			events[i] = porcupine.Event{ClientId: s.id, Kind: porcupine.CallEvent, Value: h.op(s.id), Id: s.id}
		}
	}
	return events
}

// key appends to b all that porcupine's verdict on the history depends
// on, unambiguously: each event's id and kind, a call's op key (or that
// it is the end-state read) and a return's outcome.
func (h *history) key(b []byte) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, s := range h.stamps {
		b = binary.AppendUvarint(b, uint64(s.id))
		if !s.ret {
			if o := h.op(s.id); o.final {
				b = append(b, 'F')
			} else {
				b = append(b, 'C')
				str(o.key)
			}
			continue
		}
		o := &h.outs[s.id]
		flags := byte('R')
		if o.unknown {
			flags |= 0x80
		}
		if o.noEffect {
			flags |= 0x40
		}
		b = append(b, flags)
		str(o.key)
	}
	return b
}

// linearizable reports whether h, a history of m's object, is
// linearizable: porcupine's verdict, memoised by the history's key.
func (m *model) linearizable(h *history) bool {
	var buf [512]byte
	key := h.key(buf[:0])
	m.mu.Lock()
	ok, seen := m.verdicts[string(key)]
	m.mu.Unlock()
	if seen {
		return ok
	}
	ok = porcupine.CheckEvents(m.pm, h.events())
	m.mu.Lock()
	if len(m.verdicts) < maxVerdicts {
		m.verdicts[string(key)] = ok
	}
	m.mu.Unlock()
	return ok
}

// endKey is the observed end state of an object, in the model's terms.
func endKey(m *model, res *runView, ns, name string) string {
	var storage map[string]any
	for _, o := range res.Storage {
		if o.Namespace == ns && o.Object == name {
			storage = o.Data
		}
	}
	if storage == nil {
		storage = map[string]any{}
	}
	var effects []string
	for _, e := range res.Effects {
		if e.Namespace == ns && e.Object == name {
			effects = append(effects, e.Kind+" "+canonical(e.Payload))
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.intern(storage, effects).key
}

func describeEnd(res *runView, ns, name string) string {
	for _, o := range res.Storage {
		if o.Namespace == ns && o.Object == name {
			d := canonical(o.Data)
			n := 0
			for _, e := range res.Effects {
				if e.Namespace == ns && e.Object == name {
					n++
				}
			}
			if n > 0 {
				d += fmt.Sprintf(" with %d effect(s)", n)
			}
			return d
		}
	}
	return "{}"
}
