package stub

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/internal/sched"
)

// Promise is a call started with Stub.Start and not yet awaited. Calls can
// be pipelined on its result before it resolves (Pipeline).
type Promise struct {
	s      *Stub
	k      *sched.Kernel
	ctx    context.Context // the context Start was called with; nil when it was outside a task
	method string
	done   sched.Signal
	val    any
	err    error
	cs     *callState
}

// Start begins a call in its own task and returns at once. Await its
// promise for the result, or pipeline calls on it.
func (s *Stub) Start(ctx context.Context, method string, args ...any) *Promise {
	k := s.conn.Kernel()
	p := &Promise{s: s, k: k, method: method, cs: &callState{}}
	if ctx == nil || sched.FromContext(ctx) == nil {
		p.err = sched.ErrNotInTask
		p.done.Fire(k)
		return p
	}
	p.ctx = ctx
	k.Go(ctx, fmt.Sprintf("promise %s/%s.%s", s.target.Namespace, s.target.Object, method), func(ctx context.Context) {
		p.val, _, p.err = s.do(ctx, method, args, nil, p.cs)
		p.done.Fire(k)
	})
	return p
}

// Await waits for the call and returns its result. It must be called from
// a simulated task.
func (p *Promise) Await() (any, error) {
	if !p.done.Fired() {
		if p.k.Halted() {
			return nil, sched.ErrStalled
		}
		cur := p.k.Current()
		if cur == nil {
			return nil, sched.ErrNotInTask
		}
		p.done.Wait(context.Background(), cur, "awaiting "+p.method)
		if !p.done.Fired() {
			return nil, sched.ErrClosed
		}
	}
	return p.val, p.err
}

// Pipeline makes a call on the promise's result before it resolves: the
// result must be a stub (a method that returned an RPC target). The
// pipelined call is never retried, and from now on the call that produces
// the result is not retried either (rule S12). If that call fails, the
// pipelined call fails with an error wrapping ErrPipelined. The pipelined
// call belongs to the RPC session of the call that produced the result: if
// that session began with a method marked object.Retryable, the object
// refuses an unmarked method, before it runs (the RPC-session rule, S12:
// the error wraps runtime.ErrRetryableSession).
func (p *Promise) Pipeline(method string, args ...any) *Promise {
	k := p.k
	q := &Promise{s: p.s, k: k, ctx: p.ctx, method: method, cs: &callState{}}
	p.cs.pipelined = true
	// p.ctx is nil when p was started outside a task. Otherwise the
	// pipelined call runs in a task of its own with p.ctx: that the task
	// that started p may have ended since (its context then carries no
	// task) does not matter.
	if p.ctx == nil {
		q.err = sched.ErrNotInTask
		q.done.Fire(k)
		return q
	}
	k.Go(p.ctx, "pipelined "+p.method+"."+method, func(ctx context.Context) {
		defer q.done.Fire(k)
		v, err := p.Await()
		if err != nil {
			q.err = p.s.abandon(method, fmt.Errorf("stub: %s on the result of %s: %w: %w", method, p.method, ErrPipelined, err))
			return
		}
		st, ok := v.(*Stub)
		if !ok {
			q.err = p.s.abandon(method, fmt.Errorf("stub: %s on the result of %s: %w: the result is a %T, not a stub (return an object.RpcTarget to pipeline on it)", method, p.method, ErrPipelined, v))
			return
		}
		q.val, _, q.err = st.asRef().do(ctx, method, args, nil, q.cs)
	})
	return q
}
