package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/invoke"
	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/spare"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/transport"
	"github.com/google/uuid"
	"go.uber.org/zap"
)

// ErrSetup is wrapped by errors found when a request reaches an object
// before any user code runs: the constructor failed, a method has a bad
// signature, the method does not exist, or the arguments do not fit.
var ErrSetup = errors.New("cannot run the request")

// ErrBadSignature is wrapped by the error for a method with a bad signature.
var ErrBadSignature = invoke.ErrSignature

// ErrArguments is wrapped by errors for arguments of the wrong count or type.
var ErrArguments = invoke.ErrArguments

// host runs one object: its input gate, its instance, its storage and the
// identities it has received.
type host struct {
	ns      *Namespace
	id      object.ID
	target  *wire.Target
	gate    sched.Gate
	storage *object.Storage
	state   *object.State

	inst    object.Object
	methods object.Methods // as the instance listed them; checked by build
	// compiled caches the methods called on this instance (at most
	// maxCompiled), so that a call does not compile its method again.
	compiled []*compiled
	// carried is the first attempt whose caller is delivering it (a
	// courier, courier.go), while it does: nil otherwise.
	carried *flight
	// spare is the last turn run on its caller's task, free for the next:
	// once such a turn has ended, nothing holds its turnInfo (the method's
	// context is a sched.Context of its own, see newTurnContext).
	spare   spare.One[turnInfo]
	handler http.Handler

	// The identities received whose call may still send attempts: most
	// objects have at most one at a time, kept inline; more go to a map.
	one    uuid.UUID
	hasOne bool
	seen   map[uuid.UUID]struct{}

	ws       *sockets          // accepted WebSockets (rules W1-W5, websocket.go); nil until the first
	building bool              // the constructor is running
	alarm    alarmState        // rule O6, see alarm.go
	lanes    *[wire.Lanes]lane // background timers: alarm, schedules, queue; nil until used
	// instances counts the instances built (rule O2), and ctor is what the
	// current one's constructor read (WithHistory): a turn's Instance and
	// Ctor.
	instances int
	ctor      []Read

	// The object's life (life.go): the request turns delivered and not
	// ended (running or queued at the gate), when the last turn ended, and
	// whether the eviction check is pending (rules L3, L5).
	turns      *turnInfo
	lastActive time.Duration
	evictArmed bool
	// hist is what the runtime's history keeps of the object (WithHistory),
	// from its first turn on; nil before, and without a history.
	hist *objectLog
	// alarmRuns and alarmFailures count the alarm's deliveries (Backlogs).
	alarmRuns, alarmFailures int
}

type compiled struct {
	fn        invoke.Func
	retryable bool
}

func newHost(ns *Namespace, id object.ID) *host {
	st := object.NewStorage()
	if ns.backend == object.KeyValueBacked {
		st = object.NewKeyValueStorage()
	}
	h := &host{ns: ns, id: id, storage: st}
	h.target = &wire.Target{Namespace: ns.name, Object: id.Label()}
	h.state = object.Hosting(seal.Key{}).NewState(id, h.storage, hostView{h})
	h.startJournal()
	if hs := ns.r.hist; hs != nil {
		h.storage.NotifyWrites(func() { hs.noteOutside(ns.r, h) })
	}
	return h
}

// remember records an arrival of id and reports whether it was already
// known (rule S6).
//
// The rule asks that identities be kept at least 60 s after arrival. The
// host keeps each one until no attempt of its call can arrive any more:
// the call has finished and none of its attempts is still on the link
// (see forget). That is never shorter than what the rule needs, since no
// other arrival of the identity is possible after it; and it is longer
// whenever a call outlives the window (a 60 s deadline plus link latency),
// so an unmarked method never runs twice for one call.
func (h *host) remember(id uuid.UUID) bool {
	if h.hasOne && h.one == id {
		return true
	}
	if _, known := h.seen[id]; known {
		return true
	}
	if !h.hasOne {
		h.one, h.hasOne = id, true
		return false
	}
	if h.seen == nil {
		h.seen = make(map[uuid.UUID]struct{}, 1)
	}
	h.seen[id] = struct{}{}
	return false
}

// forget drops an identity no attempt can bring again.
func (h *host) forget(id uuid.UUID) {
	if h.hasOne && h.one == id {
		h.hasOne = false
		return
	}
	delete(h.seen, id)
	if len(h.seen) == 0 {
		h.seen = nil // an idle object keeps no table
	}
}

// build constructs the instance if needed (rule O2).
func (h *host) build() (err error) {
	if h.inst != nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: constructor of %s/%s panicked: %v", ErrSetup, h.ns.name, h.id.Label(), p)
		}
	}()
	h.building = true
	defer func() { h.building = false }()
	st := h.state
	h.ctor = nil // a new instance's reads; the turns of the last keep theirs
	inst := h.ns.ctor(st)
	if h.state != st { // its BlockConcurrencyWhile failed (rule L6)
		return fmt.Errorf("%w: constructor of %s/%s: BlockConcurrencyWhile failed and reset the object", ErrSetup, h.ns.name, h.id.Label())
	}
	if inst == nil {
		return fmt.Errorf("%w: constructor of namespace %q returned nil for %s", ErrSetup, h.ns.name, h.id.Label())
	}
	methods := inst.Methods()
	if err := checkMethods(h.ns.name, methods); err != nil {
		return err
	}
	h.inst, h.methods, h.compiled = inst, methods, nil
	h.handler, _ = inst.(http.Handler)
	h.instances++
	return nil
}

// checkMethods checks every method's signature, in name order, and fails
// on the first bad one, naming it.
func checkMethods(class string, ms object.Methods) error {
	for _, n := range slices.Sorted(maps.Keys(ms)) {
		if _, err := invoke.Compile(n, ms[n].Fn()); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrSetup, class, err)
		}
	}
	return nil
}

// find returns the checked method name of ms.
func find(class string, ms object.Methods, name string) (compiled, error) {
	m, ok := ms[name]
	if !ok {
		return compiled{}, &noMethodError{class: class, method: name, has: slices.Sorted(maps.Keys(ms))}
	}
	fn, err := invoke.Compile(name, m.Fn())
	if err != nil {
		return compiled{}, fmt.Errorf("%w: %s: %w", ErrSetup, class, err)
	}
	return compiled{fn: fn, retryable: m.IsRetryable()}, nil
}

// lookup returns the compiled method f calls: the instance's, compiled
// once (a pointer: a compiled method is large), or an RPC target's.
func (h *host) lookup(f *flight) (*compiled, error) {
	if rpc := f.RPC; rpc != nil {
		if st, ok := rpc.(*sessionTarget); ok {
			rpc = st.Target
		}
		c, err := find(fmt.Sprintf("%T", rpc), rpc.Methods(), f.Req.Method)
		return &c, asRPC(err)
	}
	name := f.Req.Method
	for _, c := range h.compiled {
		if c.fn.Name == name {
			return c, nil
		}
	}
	c, err := find(h.ns.name, h.methods, name)
	if err == nil && len(h.compiled) < maxCompiled {
		h.compiled = append(h.compiled, &c)
	}
	return &c, asRPC(err)
}

// asRPC words err as the caller of an RPC method sees it: a missing
// method in the platform's words (noMethodError).
func asRPC(err error) error {
	if e, ok := err.(*noMethodError); ok {
		cp := *e
		cp.rpc = true
		return &cp
	}
	return err
}

// maxCompiled is how many methods of an instance a host keeps compiled.
const maxCompiled = 16

// receive is the object's side of an arrival (see arrive): the host
// records the delivery, remembers the request identity (rule S6) and
// starts the turn.
func (h *host) receive(f *flight) {
	r := h.ns.r
	f.Rec.Delivered = true
	dup := h.remember(f.Req.ID)
	if f.Call.Finished && f.Call.InFlight == 0 {
		h.forget(f.Req.ID) // a late attempt of a finished call: none can follow it
	}
	if ce := r.log.Check(zap.DebugLevel, "delivered"); ce != nil {
		ce.Write(zap.String("object", h.target.Object), zap.String("method", f.Req.Method),
			zap.Int("attempt", f.N), zap.Bool("duplicate", dup), zap.Duration("at", r.k.Now()))
	}
	ti := h.spare.Take() // the last inline turn's, which nothing holds any more
	if ti != nil {
		*ti = turnInfo{h: h, f: f, dup: dup}
	} else {
		ti = &turnInfo{h: h, f: f, dup: dup}
	}
	h.enter(ti)
	if h.inline(ti, f) {
		return
	}
	ctx := context.Background()
	if f.N > 1 {
		// A retry's caller may give up while the turn waits or runs (S9):
		// the method then sees its context cancelled. The first attempt is
		// never cancelled, so its turn needs no cancellable context.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		f.Cancel = cancel
	}
	t := r.k.Go(ctx, "turn", ti.run)
	if f.Line != nil && f.Line.Reserve { // L1: one line's arrivals of one instant keep their order
		h.gate.Reserve(t)
	}
}

// inline runs turn ti of flight f at once on its caller's goroutine when
// it can, and reports whether it did: the link delivered synchronously (no
// latency), the object's gate is free, and the caller need not go on while
// the method runs (lose-while-running). It is the same schedule as a turn
// task picked first, without the two task switches; the caller's own gate
// is yielded meanwhile, as its wait for the reply would.
//
// It is a speed trick that stays (issue 21): run as a task instead, a call
// costs 4 to 5 times as much (BenchmarkCallNoFault 300 ns to 1,480 ns,
// BenchmarkCallAmbiguous 770 to 3,280, BenchmarkGroupCalls at 100,000
// calls 18 times as much), and the seeded tie-breaks the extra switches
// draw change every trace that has concurrent calls, so removing it would
// change the goldens too. A first attempt the link delays gets here by
// its caller too, when the caller carries it (courier.go).
func (h *host) inline(ti *turnInfo, f *flight) bool {
	r := h.ns.r
	cur := r.k.Current()
	if cur == nil || f.Fault.Stage() == transport.WhileRunning || !h.gate.Free() {
		return false
	}
	if h.carried == f {
		r.k.Rand().Uint64() // the draw of the turn's task (see courier)
	}
	saved := cur.Work()
	left := cur.Leave()
	ctx := r.newTurnContext()
	ctx.Begin(cur)
	h.turn(ctx, cur, ti)
	ctx.End()
	cur.SetWork(saved)
	cur.Return(left)
	// The turn is over and, unless an output gate holds writes that name
	// it, nothing of the runtime's holds f any more: the stub may reuse it
	// once the reply is in.
	// A reply on its way (Replied) holds f until it fires Done: a first
	// attempt's caller waits for it whatever happens (S9), so the stub
	// reuses f only once it is in; a retry's caller may give up first.
	f.Settled = (f.Done.Fired() || f.Replied && f.N == 1) && !r.journaling
	if !r.journaling { // a pending write names its turn (gate.go)
		*ti = turnInfo{} // an idle object holds nothing of its last call
		h.spare.Put(ti)
	}
	return true
}

// turnInfo is attached to the task running an object turn (its
// sched.Work).
type turnInfo struct {
	h   *host
	f   *flight
	dup bool
	// The host's list of active turns (life.go): started once the method
	// (or handler) is about to run; dropped when a reset failed the request
	// while it waited at the gate.
	prev, next       *turnInfo
	started, dropped bool
	ctx              *sched.Context // the turn's context, interrupted at a reset (rule L3)
	holds            int32          // HoldGate calls in progress (see host.leaveGate)
	log              *turnLog       // the turn's history (WithHistory); nil without
}

func (ti *turnInfo) run(ctx context.Context) { ti.h.turn(ctx, sched.FromContext(ctx), ti) }

// String names the turn in deadlock reports.
func (ti *turnInfo) String() string {
	return fmt.Sprintf("%s/%s.%s attempt %d", ti.h.ns.name, ti.h.target.Object, ti.f.Req.Method, ti.f.N)
}

// turn runs one request inside the object, holding its input gate except
// while it waits on an outgoing call or a sleep (rule O3).
func (h *host) turn(ctx context.Context, t *sched.Task, ti *turnInfo) {
	t.SetWork(ti) // the watchdog may name the turn (see StallError)
	ti.ctx, _ = ctx.(*sched.Context)
	// The defers run on a Goexit from the method too (t.FailNow); serve
	// holds the many returns, so that these two stay open-coded (cheap).
	defer h.leave(ti)
	h.gate.Acquire(t, "waiting for the object's input gate")
	defer h.gate.Release()
	if !ti.dropped { // else the object was reset while it waited (rule L3)
		h.serve(ctx, ti)
	}
}

// serve runs the turn's request once the turn holds the gate.
func (h *host) serve(ctx context.Context, ti *turnInfo) {
	f, dup := ti.f, ti.dup
	k := h.ns.r.k
	if err := h.build(); err != nil {
		h.respond(f, wire.FailSetup, nil, nil, err)
		return
	}
	m, err := h.lookupFetch(f)
	if err != nil {
		h.respond(f, wire.FailSetup, nil, nil, err)
		return
	}
	if dup && !m.retryable && !h.ns.rerunDuplicates { // S6: refused before user code runs (RerunDuplicates: run again)
		f.Rec.Rejected = true
		f.Rec.Extend(k.Now()) // a late arrival is recorded to its refusal
		h.respond(f, wire.FailRejected, nil, nil, nil)
		return
	}
	claim := sessionClaim(f, m)
	if claim != "" && !m.retryable { // the RPC-session rule (S12): refused before user code runs
		h.respond(f, wire.FailSetup, nil, nil, &sessionError{method: f.Req.Method, first: claim})
		return
	}
	ti.started = true
	if f.Req.HTTP != nil {
		h.serveHTTP(ctx, f)
		return
	}
	args := deliveryArgs(f.Req.Args)
	direct := m.fn.Direct(args)
	var in []reflect.Value
	if !direct {
		if in, err = m.fn.Args(ctx, args); err != nil {
			h.respond(f, wire.FailSetup, nil, nil, err)
			return
		}
	}
	ti.log = h.beginRequest(f)
	h.starting(f)
	f.Rec.Executed = true
	var result any
	if direct {
		result, err = m.fn.CallDirect(ctx, args)
	} else {
		result, err = m.fn.Call(in)
	}
	if k.Halted() {
		// The method stalled the run (H1) and came back after it ended:
		// its goroutine must not touch the simulation again.
		goruntime.Goexit()
	}
	h.endRequest(ctx, ti.log)
	f.Rec.Extend(k.Now()) // D3: recorded to the end of its execution
	if err != nil {
		h.respond(f, wire.FailRemote, nil, nil, crossingErr(h.ns.name+"/"+h.target.Object+"."+f.Req.Method, err))
		return
	}
	cp, err := h.copyResult(result, claim)
	if err != nil {
		h.respond(f, wire.FailRemote, nil, nil, fmt.Errorf("result of %s/%s.%s: %w", h.ns.name, h.target.Object, f.Req.Method, err))
		return
	}
	h.respond(f, wire.FailNone, cp, nil, nil)
}

func (h *host) lookupFetch(f *flight) (*compiled, error) {
	if f.Req.HTTP == nil {
		return h.lookup(f)
	}
	if h.handler == nil {
		return nil, fmt.Errorf("%w: %s objects do not implement http.Handler, so they cannot serve Fetch", object.ErrNoMethod, h.ns.name)
	}
	return &fetchHandler, nil
}

// fetchHandler is what lookupFetch finds for a fetch: no method, and
// never marked retryable (S6).
var fetchHandler compiled

// deliveryArgs gives one delivery its own copy of the request's arguments,
// as a new deserialization of the same bytes would (rule O5): a method
// that changes an argument cannot change what a retry of the request
// brings. Immutable values (strings, numbers) are not copied.
func deliveryArgs(args []any) []any {
	var out []any
	for i, a := range args {
		if clone.Immutable(a) {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i], _, _ = clone.Copy(a, refs) // cannot fail: the stub copied it under this policy
	}
	if out == nil {
		return args
	}
	return out
}

// serveHTTP runs the object's fetch handler with the attempt's body.
func (h *host) serveHTTP(ctx context.Context, f *flight) {
	k := h.ns.r.k
	req := f.Req.HTTP.Clone(ctx)
	req.Body = f.Body
	if req.Body == nil {
		req.Body = http.NoBody
	}
	tl := h.beginFetch(ctx, f, req)
	h.starting(f)
	f.Rec.Executed = true
	rec := httptest.NewRecorder()
	w := &fetchWriter{ResponseRecorder: rec, req: req}
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = &invoke.Panic{Value: p, Stack: debug.Stack()}
			}
		}()
		h.handler.ServeHTTP(w, req)
		return nil
	}()
	h.endFetch(ctx, tl, rec)
	f.Rec.Extend(k.Now())
	if err == nil {
		err = w.check()
	}
	if err != nil {
		h.respond(f, wire.FailRemote, nil, nil, err)
		return
	}
	resp := rec.Result()
	if w.ws != nil {
		resp.Body = w.body(h)
	}
	h.respond(f, wire.FailNone, nil, resp, nil)
}

// copyResult copies a method's result across the boundary (rule O5); an
// RPC target becomes a stub that never retries (rule S1), and belongs to
// the call's RPC session: claim, when not "", is the marked method that
// began it (sessionClaim). A result that cannot be copied (nested deeper
// than clone.MaxDepth) is an error the caller gets as the object's.
func (h *host) copyResult(v any, claim string) (any, error) {
	if t, ok := v.(object.Target); ok {
		if claim != "" {
			t = &sessionTarget{Target: t, first: claim}
		}
		s, _ := h.ns.r.newStub(h, t, false)
		return s, nil
	}
	cp, _, err := clone.Copy(v, refs)
	if err != nil {
		return nil, err
	}
	return cp, nil
}

// refs is the copy policy of arguments and results (rules O5, S11).
var refs = object.Hosting(seal.Key{}).CopyPolicy()

// The RPC-session rule (rule S12; the message and its check are in the
// real workerd 1.20261117.1 binary: `After calling a method marked with
// retryable(), a Durable Object RPC session can only call methods marked
// with retryable().`, beside `claim == IsRetryableHandler::NO ||
// isRetryableMethod(...) == IsRetryableHandler::YES`; the session's first
// call claims the request's retry token with its mark,
// RequestObserver::claimRetryTokenBeforeUserCode). A session is a call
// through a stub of the object and every call made through the RPC
// targets it returned, awaited or pipelined (Promise.Pipeline), and
// through the targets those returned. When the session's first method is
// marked object.Retryable, a retry may run the session again, so every
// later call in it must be marked too; an unmarked one is refused before
// it runs. A session begun by an unmarked method calls what it likes.

// sessionTarget is an RPC target returned in a session begun by a marked
// method (first): a call through it must be to a marked method.
type sessionTarget struct {
	object.Target
	first string
}

// sessionClaim returns the marked method that began f's session, or ""
// when the session's first method is unmarked: f's own method when it is
// the session's first call (a call through a stub of the object).
func sessionClaim(f *flight, m *compiled) string {
	if st, ok := f.RPC.(*sessionTarget); ok {
		return st.first
	}
	if f.RPC == nil && f.Req.HTTP == nil && m.retryable {
		return f.Req.Method
	}
	return ""
}

// ErrRetryableSession is wrapped by the error of a call refused by the
// RPC-session rule: in a session begun by a method marked
// object.Retryable, a call through a returned RPC target to a method that
// is not marked. Its message is the platform's.
var ErrRetryableSession error = sessionRule{}

type sessionRule struct{}

func (sessionRule) Error() string {
	return "After calling a method marked with retryable(), a Durable Object RPC session can only call methods marked with retryable()."
}

// sessionError is the refusal of method, unmarked, in a session that
// began with the marked method first. It wraps ErrRetryableSession
// and ErrSetup (the host's answer, before the object's code ran).
type sessionError struct{ method, first string }

func (e *sessionError) Error() string {
	return ErrRetryableSession.Error() + " (" + e.method + " is not marked object.Retryable; the session began with " + e.first + ", which is)"
}

func (e *sessionError) Is(target error) bool {
	return target == ErrRetryableSession || target == ErrSetup
}
