package runtime

// An arrival at its object: the duplicate table (rule S6) and, when the
// object is free, a turn on the caller's own task (inline) or one of its
// own, which holds the input gate and serves the attempt (serve). What the
// turn calls is method.go's; its reply is reply.go's.

import (
	"context"
	"fmt"
	"reflect"
	goruntime "runtime"

	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/transport"
	"github.com/google/uuid"
	"go.uber.org/zap"
)

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
	defer h.release()
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
		answered(ti.log, nil, err)
		h.respond(f, wire.FailRemote, nil, nil, crossingErr(h.ns.name+"/"+h.target.Object+"."+f.Req.Method, err))
		return
	}
	cp, err := h.copyResult(result, claim)
	answered(ti.log, cp, err)
	if err != nil {
		h.respond(f, wire.FailRemote, nil, nil, fmt.Errorf("result of %s/%s.%s: %w", h.ns.name, h.target.Object, f.Req.Method, err))
		return
	}
	h.respond(f, wire.FailNone, cp, nil, nil)
}
