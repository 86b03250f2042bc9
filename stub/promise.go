package stub

import (
	"context"
	"fmt"
)

// Promise is a call started with Stub.Start and not yet awaited. Calls can
// be pipelined on its result before it resolves (Pipeline).
type Promise struct {
	s      *Stub
	ctx    context.Context // the context Start was called with; nil when it was outside a task
	method string
	wait   func() error // waits for the call's task; nil when it never started
	val    any
	err    error
	cs     *callState
}

// Start begins a call in its own task and returns at once. Await its
// promise for the result, or pipeline calls on it.
func (s *Stub) Start(ctx context.Context, method string, args ...any) *Promise {
	p := &Promise{s: s, method: method, cs: &callState{}}
	name := fmt.Sprintf("promise %s/%s.%s", s.target.Namespace, s.target.Object, method)
	if p.err = s.conn.InTask(ctx); p.err != nil {
		return p
	}
	p.ctx = ctx
	p.wait = s.conn.Go(ctx, name, func(ctx context.Context) {
		p.val, _, p.err = s.do(ctx, method, args, nil, p.cs)
	})
	return p
}

// Await waits for the call and returns its result. It must be called from
// a simulated task.
func (p *Promise) Await() (any, error) {
	if p.wait != nil {
		if err := p.wait(); err != nil {
			return nil, err
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
	q := &Promise{s: p.s, ctx: p.ctx, method: method, cs: &callState{}}
	p.cs.pipelined = true
	// p.ctx is nil when p was started outside a task. Otherwise the
	// pipelined call runs in a task of its own with p.ctx: that the task
	// that started p may have ended since (its context then carries no
	// task) does not matter.
	if p.ctx == nil {
		q.err = p.err // the runtime's ErrNotInTask
		return q
	}
	q.wait = p.s.conn.Go(p.ctx, "pipelined "+p.method+"."+method, func(ctx context.Context) {
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
