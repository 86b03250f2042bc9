package stub_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rule is shorthand for a fault on one attempt of one method.
func rule(method string, attempt int, f transport.Fault) transport.Rule {
	return transport.Rule{Method: method, Attempt: attempt, Fault: f}
}

// every makes the same rule for attempts 1..n.
func every(method string, n int, f transport.Fault) []transport.Rule {
	var out []transport.Rule
	for i := 1; i <= n; i++ {
		out = append(out, rule(method, i, f))
	}
	return out
}

// want is what a row expects, step by step: the attempts made, how many
// ran the method, how many were refused as duplicates, the outcome, and
// the error the caller sees.
type want struct {
	attempts, executions, rejected int
	outcome                        transport.Outcome
	errAttempt                     int // the attempt whose error the caller gets; 0: no error
	fault                          transport.Fault
	retryable, overloaded, remote  bool
	errContains                    string
	stored                         int // the probe's "n" afterwards
}

func TestRetryRules(t *testing.T) {
	streaming := func(ctx context.Context, s *stub.Stub) error {
		// An io.Reader that GetBody cannot rewind: sent once (S11).
		req, err := http.NewRequest(http.MethodPost, "http://p/echo", io.MultiReader(strings.NewReader("chunk")))
		if err != nil {
			return err
		}
		_, err = s.Fetch(ctx, req)
		return err
	}
	rewindable := func(ctx context.Context, s *stub.Stub) error {
		req, err := http.NewRequest(http.MethodPost, "http://p/echo", bytes.NewReader([]byte("hi")))
		if err != nil {
			return err
		}
		resp, err := s.Fetch(ctx, req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "hi #1" {
			return errors.New("every attempt must send the whole body: got " + string(b))
		}
		return nil
	}
	call := func(method string, args ...any) func(context.Context, *stub.Stub) error {
		return func(ctx context.Context, s *stub.Stub) error { _, err := s.Call(ctx, method, args...); return err }
	}
	tests := []struct {
		name  string
		opts  []stub.Option
		rules []transport.Rule
		call  func(context.Context, *stub.Stub) error
		want  want
	}{
		{
			name:  "S3 five ambiguous losses in a row: 5 attempts, first error back",
			rules: every("Add", 5, transport.LoseRequest), call: call("Add"),
			want: want{attempts: 5, outcome: transport.OutcomeAttemptsExhausted, errAttempt: 1, fault: transport.LoseRequest, retryable: true},
		},
		{
			name: "S2 MaxRetries 0: one attempt", opts: []stub.Option{stub.MaxRetries(0)},
			rules: every("Add", 5, transport.LoseRequest), call: call("Add"),
			want: want{attempts: 1, outcome: transport.OutcomeAttemptsExhausted, errAttempt: 1, fault: transport.LoseRequest, retryable: true},
		},
		{
			name: "S2 MaxRetries 1: two attempts", opts: []stub.Option{stub.MaxRetries(1)},
			rules: every("Add", 5, transport.NotDelivered), call: call("Add"),
			want: want{attempts: 2, outcome: transport.OutcomeAttemptsExhausted, errAttempt: 1, fault: transport.NotDelivered, retryable: true},
		},
		{
			name:  "S2 MaxRetries unset: default 4, five attempts",
			rules: every("Add", 5, transport.NotDelivered), call: call("Add"),
			want: want{attempts: 5, outcome: transport.OutcomeAttemptsExhausted, errAttempt: 1, fault: transport.NotDelivered, retryable: true},
		},
		{
			name:  "S3 not delivered recovers on attempt 4 with one execution",
			rules: every("Add", 3, transport.NotDelivered), call: call("Add"),
			want: want{attempts: 4, executions: 1, outcome: transport.OutcomeRecovered, stored: 1},
		},
		{
			name:  "S6 duplicate rejected on attempt 2: the unmarked method ran once",
			rules: []transport.Rule{rule("Add", 1, transport.LoseResponse)}, call: call("Add"),
			want: want{attempts: 2, executions: 1, rejected: 1, outcome: transport.OutcomeDuplicateRejected, errAttempt: 1, fault: transport.LoseResponse, retryable: true, stored: 1},
		},
		{
			name:  "S6 lost while running: the method runs to its end, the retry is refused",
			rules: []transport.Rule{rule("Add", 1, transport.LoseWhileRunning)}, call: call("Add"),
			want: want{attempts: 2, executions: 1, rejected: 1, outcome: transport.OutcomeDuplicateRejected, errAttempt: 1, fault: transport.LoseWhileRunning, retryable: true, stored: 1},
		},
		{
			name:  "S6 a marked method runs twice",
			rules: []transport.Rule{rule("Set", 1, transport.LoseResponse)}, call: call("Set", 7),
			want: want{attempts: 2, executions: 2, outcome: transport.OutcomeRecovered},
		},
		{
			name:  "S9 deadline reached during a retry: the retry is cancelled and never arrives, first error back",
			opts:  []stub.Option{stub.TimeoutMs(1000)},
			rules: []transport.Rule{rule("Add", 1, transport.LoseRequest), {Method: "Add", Attempt: 2, Delay: 5 * time.Second}},
			call:  call("Add"),
			want:  want{attempts: 2, executions: 0, outcome: transport.OutcomeTimeout, errAttempt: 1, fault: transport.LoseRequest, retryable: true, stored: 0},
		},
		{
			name:  "S9 a first attempt that fails after the deadline is not retried (and not cancelled)",
			opts:  []stub.Option{stub.TimeoutMs(1000)},
			rules: []transport.Rule{{Method: "Add", Attempt: 1, Delay: 3 * time.Second, Fault: transport.LoseRequest}},
			call:  call("Add"),
			want:  want{attempts: 1, outcome: transport.OutcomeTimeout, errAttempt: 1, fault: transport.LoseRequest, retryable: true},
		},
		{
			name:  "S4 a failure after delivery is not retried; storage survives the reset",
			rules: []transport.Rule{rule("Add", 1, transport.FailAfterDelivery)}, call: call("Add"),
			want: want{attempts: 1, executions: 1, outcome: transport.OutcomeNotRetryable, errAttempt: 1, fault: transport.FailAfterDelivery, errContains: "object reset after delivery", stored: 1},
		},
		{
			name:  "S11 a streaming body is sent once",
			rules: []transport.Rule{rule("fetch", 1, transport.LoseRequest)}, call: streaming,
			want: want{attempts: 1, outcome: transport.OutcomeNotReplayable, errAttempt: 1, fault: transport.LoseRequest, retryable: true},
		},
		{
			name:  "S11 a body GetBody rewinds is sent again, whole",
			rules: []transport.Rule{rule("fetch", 1, transport.LoseRequest)}, call: rewindable,
			want: want{attempts: 2, executions: 1, outcome: transport.OutcomeRecovered, stored: 1},
		},
		{
			name:  "S11 an argument holding an io.Reader makes the call one-shot",
			rules: []transport.Rule{rule("Take", 1, transport.LoseRequest)}, call: call("Take", strings.NewReader("x")),
			want: want{attempts: 1, outcome: transport.OutcomeNotReplayable, errAttempt: 1, fault: transport.LoseRequest, retryable: true},
		},
		{
			name:  "S4 overloaded is never retried",
			rules: []transport.Rule{rule("Add", 1, transport.Overloaded)}, call: call("Add"),
			want: want{attempts: 1, outcome: transport.OutcomeNotRetryable, errAttempt: 1, fault: transport.Overloaded, overloaded: true},
		},
		{
			name: "S4 an object error is never retried and comes back remote",
			call: call("Fail"),
			want: want{attempts: 1, executions: 1, outcome: transport.OutcomeNotRetryable, errAttempt: 1, remote: true, errContains: "object error: out of stock"},
		},
		{
			name: "S4 an object panic comes back remote",
			call: call("Panic"),
			want: want{attempts: 1, executions: 1, outcome: transport.OutcomeNotRetryable, errAttempt: 1, remote: true, errContains: "panic: kaboom"},
		},
		{
			name:  "S4 an HTTP 500 response is a successful call",
			rules: []transport.Rule{rule("fetch", 2, transport.LoseRequest)},
			call: func(ctx context.Context, s *stub.Stub) error {
				req, _ := http.NewRequest(http.MethodGet, "http://p/500", nil)
				resp, err := s.Fetch(ctx, req)
				if err == nil && resp.StatusCode != http.StatusInternalServerError {
					return errors.New("want the 500 response back")
				}
				return err
			},
			want: want{attempts: 1, executions: 1, outcome: transport.OutcomeOK},
		},
		{
			name:  "S10 a later non-retryable error wins over the first",
			rules: []transport.Rule{rule("Add", 1, transport.LoseRequest), rule("Add", 2, transport.Overloaded)}, call: call("Add"),
			want: want{attempts: 2, outcome: transport.OutcomeNotRetryable, errAttempt: 2, fault: transport.Overloaded, overloaded: true},
		},
		{
			name:  "S10 a later failure after delivery wins too",
			rules: []transport.Rule{rule("Add", 1, transport.NotDelivered), rule("Add", 2, transport.FailAfterDelivery)}, call: call("Add"),
			want: want{attempts: 2, executions: 1, outcome: transport.OutcomeNotRetryable, errAttempt: 2, fault: transport.FailAfterDelivery, stored: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 11, tc.rules...)
			s := w.stub(t, tc.opts...)
			var callErr error
			require.NoError(t, w.rt.Run(func(ctx context.Context) error {
				callErr = tc.call(ctx, s)
				return nil
			}))
			calls := w.rt.Calls()
			require.Len(t, calls, 1)
			c := calls[0]
			assert.Len(t, c.Attempts, tc.want.attempts, "attempts made")
			assert.Equal(t, tc.want.executions, c.Executions(), "executions")
			assert.Equal(t, tc.want.rejected, c.Rejections(), "duplicates rejected")
			assert.Equal(t, tc.want.outcome, c.Outcome, "outcome")
			assert.Equal(t, 1, c.Subrequests, "S13: one subrequest per call")
			assert.Empty(t, identityFault(c), "S5: one request identity, renewed only after attempts known not to have reached the object")
			assert.Equal(t, tc.want.stored, w.stored(t, "n"), "the object's state afterwards")
			if tc.want.errAttempt == 0 {
				require.NoError(t, callErr)
				assert.Empty(t, c.Err)
				return
			}
			var e *stub.Error
			require.ErrorAs(t, callErr, &e)
			assert.Equal(t, tc.want.errAttempt, e.Attempt, "which attempt's error the caller gets")
			assert.Equal(t, tc.want.fault, e.Fault)
			assert.Equal(t, tc.want.retryable, e.Retryable, "retryable flag")
			assert.Equal(t, tc.want.overloaded, e.Overloaded, "overloaded flag")
			assert.Equal(t, tc.want.remote, e.Remote, "remote flag")
			assert.Equal(t, "PROBE", e.Namespace)
			assert.Equal(t, "p", e.Object)
			assert.Contains(t, callErr.Error(), tc.want.errContains)
			assert.Equal(t, callErr.Error(), c.Err, "the record keeps the caller's error")
		})
	}
}

// S1: stubs minted by the namespace retry; stubs that arrive as results
// or arguments never do.
func TestOnlyMintedStubsRetryS1(t *testing.T) {
	w := newWorld(t, 3, rule("Whoami", 1, transport.LoseRequest))
	s := w.stub(t)
	assert.True(t, s.Retries())
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		v, err := s.Call(ctx, "Session", "ada")
		require.NoError(t, err)
		sess, ok := v.(*stub.Stub)
		require.True(t, ok, "an RPC target comes back as a stub, got %T", v)
		assert.False(t, sess.Retries(), "a stub that arrived as a result never retries")
		_, err = sess.Call(ctx, "Whoami")
		var e *stub.Error
		require.ErrorAs(t, err, &e)
		assert.True(t, e.Retryable, "the error is retryable, but this stub does not retry")

		// L2: the failure broke the returned stub too; a fresh one works.
		_, again := sess.Call(ctx, "Add")
		assertBrokenBy(t, err, again, "Add")
		v, err = s.Call(ctx, "Session", "ada")
		require.NoError(t, err)
		n, err := stub.CallAs[int](ctx, v.(*stub.Stub), "Add") // runs inside the probe, on its storage
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		return nil
	}))
	assert.Equal(t, 1, w.stored(t, "n"))
	calls := w.rt.Calls()
	require.Len(t, calls, 5)
	assert.Equal(t, transport.OutcomeNotReplayable, calls[1].Outcome)
	assert.Len(t, calls[1].Attempts, 1)
	assert.Equal(t, transport.OutcomeBrokenStub, calls[2].Outcome)
	assert.Empty(t, calls[2].Attempts)
}

// S1: a stub passed as an argument arrives as a stub that never retries.
func TestStubArgumentArrivesWithoutRetriesS1(t *testing.T) {
	w := newWorld(t, 3)
	holder := &stubHolder{}
	ns := w.rt.Namespace("HOLDER", func(*object.State) object.Object { return holder })
	s := w.stub(t)
	h, err := ns.GetByName("h")
	require.NoError(t, err)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, err := h.Call(ctx, "Keep", s)
		return err
	}))
	require.NotNil(t, holder.got)
	assert.False(t, holder.got.Retries())
	assert.True(t, s.Retries(), "the caller's own stub is unchanged")
	assert.Equal(t, transport.OutcomeOK, w.rt.Calls()[0].Outcome)
}

type stubHolder struct{ got *stub.Stub }

func (h *stubHolder) Methods() object.Methods {
	return object.Methods{"Keep": object.Func(func(ctx context.Context, s *stub.Stub) error { h.got = s; return nil })}
}

// O5: an argument that is not plain data (a func, a channel, an
// operating-system file, a cycle) is refused with its path before anything
// is sent: such a call used to go out one-shot, which showed only when a
// fault hit it.
func TestO5_ArgumentsThatAreNotPlainDataAreRefused(t *testing.T) {
	w := newWorld(t, 3)
	s := w.stub(t)
	self := map[string]any{}
	self["me"] = self
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		for _, tc := range []struct {
			args []any
			want string
		}{
			{[]any{make(chan int)}, "stub: Take argument 1: value holds a channel (no platform counterpart: send a stream as an io.Reader)"},
			{[]any{struct{ Log *os.File }{os.Stderr}}, "stub: Take argument 1: value.Log is an operating-system handle (*os.File)"},
			{[]any{self}, "stub: Take argument 1: value[me] is value again"},
		} {
			_, err := s.Call(ctx, "Take", tc.args...)
			assert.ErrorIs(t, err, object.ErrNotPlainData, tc.want)
			assert.ErrorContains(t, err, tc.want)
		}
		return nil
	}))
	assert.Empty(t, w.rt.Calls(), "no call was made")
	assert.Equal(t, 0, w.stored(t, "n"), "the method never ran")
}

// S11: a call whose argument holds a stub or an RPC target is one-shot.
func TestReferenceArgumentsAreOneShotS11(t *testing.T) {
	w := newWorld(t, 3, rule("Take", 1, transport.LoseRequest))
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Take", s)
		require.Error(t, err)
		s = w.stub(t) // the failure broke s (L2)
		_, err = s.Call(ctx, "Take", &session{user: "x"})
		require.Error(t, err)
		return nil
	}))
	for _, c := range w.rt.Calls() {
		assert.Equal(t, transport.OutcomeNotReplayable, c.Outcome)
		assert.Len(t, c.Attempts, 1)
	}
}

// S8: the sleep before retry n is uniform in [0, min(500ms·2^(n-1), 2s)],
// drawn from the seed; over many seeds it spans the range.
func TestFullJitterBackoffS8(t *testing.T) {
	caps := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second}
	maxSeen := make([]time.Duration, 4)
	minSeen := []time.Duration{time.Hour, time.Hour, time.Hour, time.Hour}
	for seed := range uint64(200) {
		w := newWorld(t, seed, every("Add", 5, transport.NotDelivered)...)
		s := w.stub(t)
		require.NoError(t, w.rt.Run(func(ctx context.Context) error { _, _ = s.Call(ctx, "Add"); return nil }))
		at := w.rt.Calls()[0].Attempts
		require.Len(t, at, 5)
		for n := 1; n < 5; n++ {
			gap := at[n].Start - at[n-1].End
			require.GreaterOrEqual(t, gap, time.Duration(0))
			require.LessOrEqual(t, gap, caps[n-1], "seed %d: sleep before retry %d", seed, n)
			maxSeen[n-1] = max(maxSeen[n-1], gap)
			minSeen[n-1] = min(minSeen[n-1], gap)
		}
	}
	for i, c := range caps {
		assert.Greater(t, maxSeen[i], c*8/10, "retry %d: draws reach near the cap", i+1)
		assert.Less(t, minSeen[i], c*2/10, "retry %d: draws reach near zero", i+1)
	}
}

// S7: the mark belongs to the function. Embedding reuses the entry and
// its mark; an override, a closure or a wrapper is unmarked.
func TestMarksBelongToTheFunctionS7(t *testing.T) {
	rt := runtime.New(runtime.WithFaults(transport.Random(transport.Rates{transport.LoseResponse: 0})))
	t.Cleanup(func() { _ = rt.Close() })
	d := &derived{}
	ms := d.Methods()
	assert.True(t, ms["Set"].IsRetryable(), "inherited through embedding")
	assert.False(t, ms["Add"].IsRetryable(), "inherited unmarked stays unmarked")
	assert.False(t, ms["SetOverride"].IsRetryable(), "an override is unmarked")
	assert.False(t, ms["SetClosure"].IsRetryable(), "a bound closure is unmarked")
	assert.False(t, ms["SetWrapped"].IsRetryable(), "a wrapper is unmarked")
	assert.True(t, ms["SetRemarked"].IsRetryable(), "until passed to Retryable again")

	// And the runtime acts on the marks: a duplicate of an inherited marked
	// method runs again; one of an override is refused.
	for method, rejected := range map[string]int{"Set": 0, "SetOverride": 1, "SetRemarked": 0} {
		w := newWorld(t, 5, rule(method, 1, transport.LoseResponse))
		ns := w.rt.Namespace("DERIVED", func(st *object.State) object.Object { return &derived{probe: probe{st: st}} })
		s, err := ns.GetByName("d")
		require.NoError(t, err)
		require.NoError(t, w.rt.Run(func(ctx context.Context) error { _, _ = s.Call(ctx, method, 1); return nil }))
		assert.Equal(t, rejected, w.rt.Calls()[0].Rejections(), method)
	}
}

// derived embeds probe and reuses its Methods entries.
type derived struct{ probe }

func (d *derived) Methods() object.Methods {
	ms := d.probe.Methods()
	ms["SetOverride"] = object.Func(d.Set)
	ms["SetClosure"] = object.Func(func(ctx context.Context, v int) error { return d.probe.Set(ctx, v) })
	ms["SetWrapped"] = object.Func(logged(ms["Set"].Fn().(func(context.Context, int) error)))
	ms["SetRemarked"] = object.Retryable(d.Set)
	return ms
}

func logged(f func(context.Context, int) error) func(context.Context, int) error {
	return func(ctx context.Context, v int) error { return f(ctx, v) }
}

// S12: pipelining stops the retries of the call that produces the result,
// and the pipelined call itself is never retried.
func TestPipeliningS12(t *testing.T) {
	t.Run("pipelined before the failure", func(t *testing.T) {
		w := newWorld(t, 2, rule("Session", 1, transport.LoseRequest))
		s := w.stub(t)
		var perr, qerr error
		require.NoError(t, w.rt.Run(func(ctx context.Context) error {
			p := s.Start(ctx, "Session", "ada")
			q := p.Pipeline("Whoami")
			_, perr = p.Await()
			_, qerr = q.Await()
			return nil
		}))
		require.Error(t, perr)
		assert.ErrorIs(t, qerr, stub.ErrPipelined)
		calls := w.rt.Calls()
		require.Len(t, calls, 2)
		assert.Equal(t, transport.OutcomeNotReplayable, calls[0].Outcome, "not retried once pipelined")
		assert.Len(t, calls[0].Attempts, 1)
		assert.Equal(t, "Whoami", calls[1].Method)
		assert.Equal(t, transport.OutcomeCancelled, calls[1].Outcome, "the pipelined call never started")
		assert.Empty(t, calls[1].Attempts)
	})
	t.Run("pipelined during the backoff", func(t *testing.T) {
		w := newWorld(t, 2, rule("Session", 1, transport.LoseRequest))
		s := w.stub(t)
		require.NoError(t, w.rt.Run(func(ctx context.Context) error {
			p := s.Start(ctx, "Session", "ada")
			if err := w.rt.Sleep(ctx, time.Millisecond); err != nil { // attempt 1 has failed: p is in its backoff
				return err
			}
			q := p.Pipeline("Whoami")
			_, _ = q.Await()
			return nil
		}))
		c := w.rt.Calls()[0]
		assert.Equal(t, transport.OutcomeNotReplayable, c.Outcome, "the retry after the backoff does not start")
		assert.Len(t, c.Attempts, 1)
	})
	t.Run("pipelined on a success", func(t *testing.T) {
		w := newWorld(t, 2, rule("Whoami", 1, transport.LoseRequest))
		s := w.stub(t)
		var who any
		var qerr error
		require.NoError(t, w.rt.Run(func(ctx context.Context) error {
			q := s.Start(ctx, "Session", "ada").Pipeline("Whoami")
			who, qerr = q.Await()
			return nil
		}))
		require.Error(t, qerr, "a pipelined call is never retried")
		assert.Nil(t, who)
		calls := w.rt.Calls()
		require.Len(t, calls, 2)
		assert.Equal(t, transport.OutcomeOK, calls[0].Outcome)
		assert.Equal(t, transport.OutcomeNotReplayable, calls[1].Outcome)
	})
	t.Run("a retry cancelled at the deadline cancels its pipelined calls", func(t *testing.T) {
		w := newWorld(t, 2, rule("Session", 1, transport.NotDelivered), transport.Rule{Method: "Session", Attempt: 2, Delay: time.Minute})
		s := w.stub(t, stub.TimeoutMs(2000))
		var qerr error
		require.NoError(t, w.rt.Run(func(ctx context.Context) error {
			p := s.Start(ctx, "Session", "ada")
			// Wait until the retry is in flight, then pipeline on it.
			if err := w.rt.Sleep(ctx, 1900*time.Millisecond); err != nil {
				return err
			}
			_, qerr = p.Pipeline("Whoami").Await()
			return nil
		}))
		assert.ErrorIs(t, qerr, stub.ErrPipelined)
		calls := w.rt.Calls()
		assert.Equal(t, transport.OutcomeTimeout, calls[0].Outcome)
		assert.True(t, calls[0].Attempts[1].Cancelled)
		assert.Equal(t, transport.OutcomeCancelled, calls[1].Outcome)
	})
}

// S14: a cancelled caller context stops retries: the backoff sleep ends at
// once and no attempt starts after it.
func TestCancelledCallerS14(t *testing.T) {
	t.Run("during the backoff", func(t *testing.T) {
		w := newWorld(t, 4, every("Add", 5, transport.NotDelivered)...)
		s := w.stub(t)
		var err error
		var cancelAt time.Duration
		require.NoError(t, w.rt.Run(func(ctx context.Context) error {
			cctx, cancel := context.WithCancel(ctx)
			g := w.rt.Group(ctx)
			g.Go(func(context.Context) error { _, err = s.Call(cctx, "Add"); return nil })
			g.Go(func(ctx context.Context) error {
				// Attempt 1 fails at once; its backoff is under way at 1 ms.
				_ = w.rt.Sleep(ctx, time.Millisecond)
				cancelAt = w.rt.Elapsed()
				cancel()
				return nil
			})
			return g.Wait()
		}))
		require.ErrorIs(t, err, context.Canceled)
		var e *stub.Error
		require.ErrorAs(t, err, &e)
		assert.Contains(t, err.Error(), "call cancelled after 1 attempt(s): context canceled; first error: not delivered")
		c := w.rt.Calls()[0]
		assert.Equal(t, transport.OutcomeCancelled, c.Outcome)
		assert.Len(t, c.Attempts, 1, "no attempt starts after cancellation")
		assert.Equal(t, cancelAt, c.End, "the backoff sleep ended at once")
	})
	t.Run("before the call", func(t *testing.T) {
		w := newWorld(t, 4)
		s := w.stub(t)
		var err error
		require.NoError(t, w.rt.Run(func(ctx context.Context) error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err = s.Call(cctx, "Add")
			return nil
		}))
		require.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, w.rt.Calls()[0].Attempts)
		assert.Equal(t, 0, w.stored(t, "n"))
	})
	t.Run("the first attempt is never cancelled", func(t *testing.T) {
		w := newWorld(t, 4)
		s := w.stub(t)
		var v any
		var err error
		require.NoError(t, w.rt.Run(func(ctx context.Context) error {
			cctx, cancel := context.WithCancel(ctx)
			g := w.rt.Group(ctx)
			g.Go(func(context.Context) error { v, err = s.Call(cctx, "Slow", 5*time.Second); return nil })
			g.Go(func(ctx context.Context) error { _ = w.rt.Sleep(ctx, time.Second); cancel(); return nil })
			return g.Wait()
		}))
		require.NoError(t, err, "the first attempt ran to its end")
		assert.Equal(t, 1, v)
		assert.False(t, w.rt.Calls()[0].Attempts[0].Cancelled)
	})
}

// S9: the first attempt is never cancelled, however long it takes.
func TestFirstAttemptNeverCancelledS9(t *testing.T) {
	w := newWorld(t, 4)
	s := w.stub(t, stub.TimeoutMs(500))
	var v any
	var err error
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		v, err = s.Call(ctx, "Slow", time.Minute)
		return nil
	}))
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	c := w.rt.Calls()[0]
	assert.Equal(t, transport.OutcomeOK, c.Outcome)
	assert.Equal(t, time.Minute, c.End, "the call took a minute, far past its 500 ms deadline")
}

// S13 and S15: retries are not subrequests, but they multiply with an
// application's own loop.
func TestAmplificationS15(t *testing.T) {
	// The arithmetic (Worst) lives in package amplify: amplify.TestWorstS15.
	worst := 3 * (stub.DefaultMaxRetries + 1)

	w := newWorld(t, 8, every("Set", 5, transport.LoseResponse)...)
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		for range 3 { // the application's own retry loop
			if _, err := s.Call(ctx, "Set", 1); err == nil {
				return errors.New("want every attempt's reply lost")
			}
			s = w.stub(t) // the failure broke s (L2): each outer attempt takes a fresh stub
		}
		return nil
	}))
	reached := 0
	for _, c := range w.rt.Calls() {
		assert.Equal(t, 1, c.Subrequests, "S13")
		reached += c.Executions()
	}
	assert.Equal(t, worst, reached, "3 outer attempts around a default stub reached the object 15 times")
}

// S6 and S9: an identity is remembered for as long as an attempt of its
// call can still arrive; a retry cancelled at the deadline cannot: the
// third attempt, which the link would have landed 63 s after the first
// delivery, never arrives (before the S9 fix it arrived and had to be
// refused as a duplicate).
func TestIdentityOutlivesTheWindowS6(t *testing.T) {
	w := newWorld(t, 6,
		rule("Add", 1, transport.LoseResponse),
		transport.Rule{Method: "Add", Attempt: 2, Fault: transport.NotDelivered, Delay: 58 * time.Second},
		transport.Rule{Method: "Add", Attempt: 3, Delay: 5 * time.Second},
	)
	s := w.stub(t, stub.TimeoutMs(60000))
	require.NoError(t, w.rt.Run(func(ctx context.Context) error { _, _ = s.Call(ctx, "Add"); return nil }))
	c := w.rt.Calls()[0]
	require.Len(t, c.Attempts, 3)
	assert.Equal(t, transport.OutcomeTimeout, c.Outcome)
	third := c.Attempts[2]
	assert.True(t, third.Cancelled, "cancelled at the deadline")
	assert.False(t, third.Delivered, "so it never reaches the object (S9)")
	assert.Equal(t, 60*time.Second, third.End)
	assert.Equal(t, 1, w.stored(t, "n"), "AddOne ran once")
}

// FailAfterDelivery resets the object: its in-memory fields are lost, its
// storage is kept, and the next delivery builds a new instance (O4).
func TestFailAfterDeliveryResetsTheObject(t *testing.T) {
	w := newWorld(t, 1, rule("Add", 1, transport.NotDelivered), rule("Add", 2, transport.FailAfterDelivery))
	s := w.stub(t)
	id := w.ns.IDFromName("p")
	var callErr error
	var fields int
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		if _, err := s.Call(ctx, "Set", 1); err != nil { // builds the instance
			return err
		}
		built := w.ns.Instance(id)
		require.NotNil(t, built)
		_, callErr = s.Call(ctx, "Add")
		assert.Nil(t, w.ns.Instance(id), "the instance was discarded")
		s = w.stub(t) // the failure broke s (L2)
		var err error
		fields, err = stub.CallAs[int](ctx, s, "Fields")
		assert.NotSame(t, built, w.ns.Instance(id), "the next delivery built a new instance")
		return err
	}))
	var e *stub.Error
	require.ErrorAs(t, callErr, &e)
	assert.Equal(t, transport.FailAfterDelivery, e.Fault)
	assert.Equal(t, 2, e.Attempt)
	assert.False(t, e.Retryable || e.Overloaded || e.Remote, "neither flag: not retried")
	assert.Equal(t, 0, fields, "in-memory fields are lost")
	assert.Equal(t, 1, w.stored(t, "n"), "storage is kept: the Add that ran before the reset counts")
	assert.Equal(t, 1, w.stored(t, "v"))
}

// mutator changes its argument: a retry must still bring the original (O5).
type mutator struct{ seen []string }

func (m *mutator) Methods() object.Methods {
	return object.Methods{"Tag": object.Retryable(func(ctx context.Context, tags map[string]string) error {
		m.seen = append(m.seen, tags["k"])
		tags["k"] = "changed by the object"
		return nil
	})}
}

// O5 across attempts: each delivery gets its own copy of the arguments.
func TestEachDeliveryGetsItsOwnArgumentsO5(t *testing.T) {
	w := newWorld(t, 1, rule("Tag", 1, transport.LoseResponse))
	m := &mutator{}
	ns := w.rt.Namespace("M", func(*object.State) object.Object { return m })
	s, err := ns.GetByName("m")
	require.NoError(t, err)
	arg := map[string]string{"k": "original"}
	require.NoError(t, w.rt.Run(func(ctx context.Context) error { _, err := s.Call(ctx, "Tag", arg); return err }))
	assert.Equal(t, []string{"original", "original"}, m.seen, "the retry saw the request as sent")
	assert.Equal(t, "original", arg["k"], "and the caller's value is untouched")
}
