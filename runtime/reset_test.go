package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gateHolder keeps its input gate closed for a second (BlockConcurrencyWhile
// around a sleep), so that requests arriving meanwhile queue at the gate;
// then Hold returns, HoldAbort aborts the object and HoldFail's callback
// fails (rule L6). Count counts its runs in runs, which outlives resets.
// Abort aborts the object at once, FailBlock's callback fails at once.
type gateHolder struct {
	st   *object.State
	runs *int
	// stale is what Slow's write returned: Slow sleeps holdFor, then
	// writes (a reset during the sleep makes it stale, rule L4).
	stale *error
}

// holdFor is how long gateHolder keeps its gate closed.
const holdFor = time.Second

func (h *gateHolder) Methods() object.Methods {
	hold := func(ctx context.Context, fail error) error {
		return h.st.BlockConcurrencyWhile(ctx, func(ctx context.Context) error {
			if err := h.st.Sleep(ctx, holdFor); err != nil {
				return err
			}
			return fail
		})
	}
	return object.Methods{
		"Hold": object.Func(func(ctx context.Context) error { return hold(ctx, nil) }),
		"HoldAbort": object.Func(func(ctx context.Context, reason string) error {
			if err := hold(ctx, nil); err != nil {
				return err
			}
			h.st.Abort(reason) // the gate is still this turn's: the others are queued
			return nil
		}),
		"HoldFail": object.Func(func(ctx context.Context, msg string) error { return hold(ctx, errors.New(msg)) }),
		"Count": object.Func(func(ctx context.Context) error {
			*h.runs++
			return nil
		}),
		// Slow sleeps, then writes, whatever its sleep returned: a reset
		// during the sleep ends it (L3) and refuses the write (L4).
		"Slow": object.Func(func(ctx context.Context) error {
			*h.stale = errors.Join(h.st.Sleep(ctx, holdFor), h.st.Storage().Put(ctx, "v", 1))
			return *h.stale
		}),
		"Abort": object.Func(func(ctx context.Context, reason string) error {
			h.st.Abort(reason)
			return nil
		}),
		"FailBlock": object.Func(func(ctx context.Context, msg string) error {
			return h.st.BlockConcurrencyWhile(ctx, func(context.Context) error { return errors.New(msg) })
		}),
	}
}

// resetRun is what queuedAtReset saw.
type resetRun struct {
	first  error           // the first call's error
	queued []error         // the Count calls' errors
	at     []time.Duration // the instants they failed at
	runs   int             // Count's runs, counted a minute after
	rt     *runtime.Runtime
}

// queuedAtReset calls method with args on an object of a gateHolder
// namespace, and, once it holds the gate, Count three times through
// stubs of their own allowing 4 retries, while reset (if not nil) resets
// the object half-way through the hold; opts are the runtime's.
func queuedAtReset(t *testing.T, method string, args []any, reset func(*runtime.Namespace, object.ID) error, opts ...runtime.Option) *resetRun {
	t.Helper()
	rr := &resetRun{rt: newRuntime(t, opts...), queued: make([]error, 3), at: make([]time.Duration, 3)}
	rt := rr.rt
	ns := rt.Namespace("H", func(st *object.State) object.Object { return &gateHolder{st: st, runs: &rr.runs} })
	id := ns.IDFromName("h")
	run(t, rt, func(ctx context.Context) error {
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error {
			_, rr.first = mustStub(t, ns, "h").Call(ctx, method, args...)
			return nil
		})
		for i := range rr.queued {
			g.Go(func(ctx context.Context) error {
				if err := rt.Sleep(ctx, 100*time.Millisecond); err != nil {
					return err
				}
				_, rr.queued[i] = mustStub(t, ns, "h", stub.MaxRetries(4)).Call(ctx, "Count")
				rr.at[i] = rt.Now().Sub(runtime.Epoch)
				return nil
			})
		}
		if reset != nil {
			g.Go(func(ctx context.Context) error {
				if err := rt.Sleep(ctx, holdFor/2); err != nil {
					return err
				}
				return reset(ns, id)
			})
		}
		return g.Wait()
	})
	require.NoError(t, rt.Advance(time.Minute), "no retry runs later either")
	return rr
}

// L3: requests queued at the object's input gate (delivered, not started)
// when the object resets fail with the same error as the request running
// then, flagged DurableObjectReset, neither retryable nor remote, at the
// reset, and are not retried: the method never runs, also with
// maxRetries 4. Expected values: real workerd 1.20261117.1, run side by
// side (issue 22: the queued requests' callers get the reset's error,
// durableObjectReset, not retryable, 0 runs). The same holds for a reset
// by State.Abort, by a failed BlockConcurrencyWhile (rule L6) and by the
// FailAfterDelivery fault (a reset at the reply).
func TestL3_QueuedRequestsFailWithTheResetAndAreNotRetried(t *testing.T) {
	codeUpdate := transport.ResetCodeUpdate
	for _, c := range []struct {
		name   string
		method string
		args   []any
		reset  func(*runtime.Namespace, object.ID) error
		at     time.Duration // the reset's instant
		msg    string
		opts   []runtime.Option
	}{
		{"Namespace.Reset", "Hold", nil, func(ns *runtime.Namespace, id object.ID) error { return ns.Reset(id, codeUpdate) },
			holdFor / 2, "object reset (code-update): " + codeUpdate.Message(), nil},
		{"State.Abort", "HoldAbort", []any{"aborted on purpose"}, nil, holdFor, "aborted on purpose", nil},
		{"State.Abort without a reason", "HoldAbort", []any{""}, nil, holdFor, transport.ResetAbort.Message(), nil},
		{"BlockConcurrencyWhile", "HoldFail", []any{"callback failed"}, nil, holdFor, "callback failed", nil},
		{"FailAfterDelivery", "Hold", nil, nil, holdFor, transport.FailAfterDelivery.Message(),
			[]runtime.Option{runtime.WithFaults(transport.Plan(transport.Rule{Method: "Hold", Fault: transport.FailAfterDelivery}))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rr := queuedAtReset(t, c.method, c.args, c.reset, c.opts...)
			var fe *stub.Error
			require.ErrorAs(t, rr.first, &fe)
			assert.True(t, fe.DurableObjectReset)
			assert.Equal(t, c.msg, fe.Msg)
			for i, err := range rr.queued {
				var e *stub.Error
				require.ErrorAs(t, err, &e, "queued call %d", i)
				assert.True(t, e.DurableObjectReset, "queued call %d", i)
				assert.False(t, e.Retryable, "queued call %d: not retryable", i)
				assert.False(t, e.Remote, "queued call %d", i)
				assert.Equal(t, fe.Msg, e.Msg, "queued call %d: the running request's error", i)
				assert.Equal(t, c.at, rr.at[i], "queued call %d fails at the reset", i)
			}
			assert.Zero(t, rr.runs, "a queued request never runs, and is not retried")
			n := 0
			for _, call := range rr.rt.Calls() {
				if call.Method != "Count" {
					continue
				}
				n++
				require.Len(t, call.Attempts, 1, "not retried")
				assert.Equal(t, transport.OutcomeNotRetryable, call.Outcome)
				assert.True(t, call.Attempts[0].Delivered, "it reached the object")
				assert.False(t, call.Attempts[0].Executed, "it never ran")
			}
			assert.Equal(t, 3, n)
		})
	}
}

// L3: the request running when the object resets fails at the reset, not
// when the stale method returns; the stale method's waits on its context
// end then, with an error wrapping ErrInstanceReset, and a write it makes
// anyway is refused (L4). That holds whatever resets the object:
// Namespace.Reset, another request's State.Abort, another request's failed
// BlockConcurrencyWhile (L6), and whether the turn runs on a task of its
// own (the request traveled with a latency) or on its caller's task
// (host.inline, where the caller can go on only once the stale method
// returns); the running request's caller gets the resetting request's
// error. Expected value: real workerd 1.20261117.1 (issue 22: the caller
// fails at once, at the reset).
func TestL3_RunningRequestFailsAtTheResetInstant(t *testing.T) {
	const resetAt = holdFor / 2
	memory := transport.ResetMemoryLimit
	for _, c := range []struct {
		name  string
		reset func(ctx context.Context, ns *runtime.Namespace, id object.ID) error
		msg   string
	}{
		{"Namespace.Reset", func(ctx context.Context, ns *runtime.Namespace, id object.ID) error { return ns.Reset(id, memory) },
			"object reset (memory-limit): " + memory.Message()},
		{"State.Abort", func(ctx context.Context, ns *runtime.Namespace, id object.ID) error {
			_, err := mustStub(t, ns, "h").Call(ctx, "Abort", "enough")
			return wantReset(err, "enough")
		}, "enough"},
		{"BlockConcurrencyWhile", func(ctx context.Context, ns *runtime.Namespace, id object.ID) error {
			_, err := mustStub(t, ns, "h").Call(ctx, "FailBlock", "callback failed")
			return wantReset(err, "callback failed")
		}, "callback failed"},
	} {
		for _, path := range []struct {
			name string
			opts []runtime.Option
		}{
			{"on a task of its own", []runtime.Option{runtime.WithFaults(transport.Plan(transport.Rule{Method: "Slow", Attempt: 1, Delay: time.Millisecond}))}},
			{"on its caller's task", nil}, // host.inline
		} {
			t.Run(c.name+"/"+path.name, func(t *testing.T) {
				rt := newRuntime(t, path.opts...)
				var stale error
				runs := 0
				ns := rt.Namespace("H", func(st *object.State) object.Object { return &gateHolder{st: st, runs: &runs, stale: &stale} })
				id := ns.IDFromName("h")
				var callErr error
				var failedAt time.Duration
				run(t, rt, func(ctx context.Context) error {
					g := rt.Group(ctx)
					g.Go(func(ctx context.Context) error {
						_, callErr = mustStub(t, ns, "h").Call(ctx, "Slow")
						failedAt = rt.Now().Sub(runtime.Epoch)
						return nil
					})
					g.Go(func(ctx context.Context) error {
						if err := rt.Sleep(ctx, resetAt); err != nil {
							return err
						}
						return c.reset(ctx, ns, id)
					})
					return g.Wait()
				})
				var e *stub.Error
				require.ErrorAs(t, callErr, &e)
				assert.True(t, e.DurableObjectReset)
				assert.False(t, e.Retryable)
				assert.False(t, e.Remote)
				assert.Equal(t, c.msg, e.Msg)
				assert.Equal(t, resetAt, failedAt, "the caller fails at the reset")
				call := rt.Calls()[0]
				require.Equal(t, "Slow", call.Method)
				assert.Equal(t, resetAt, call.End, "the call ends at the reset")
				require.Len(t, call.Attempts, 1, "not retried")
				assert.Equal(t, resetAt, call.Attempts[0].End, "the stale method's sleep ended at the reset, and it returned then (D3)")
				require.ErrorIs(t, stale, object.ErrInstanceReset, "its sleep ended and its write was refused (L4)")
				assert.Contains(t, stale.Error(), "this one's waits end")
				assert.Empty(t, ns.Storage(id).Snapshot())
			})
		}
	}
}

// wantReset is nil when err is a reset error whose message is msg.
func wantReset(err error, msg string) error {
	var e *stub.Error
	if !errors.As(err, &e) || !e.DurableObjectReset || e.Msg != msg {
		return fmt.Errorf("want a reset error %q, got %v", msg, err)
	}
	return nil
}
