package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var pay = &agent.BreakerOptions{Name: "payments", Failures: 3, Window: 10 * time.Second, Cooldown: 5 * time.Second}

// A7: a circuit breaker opens after N failed attempts within its window,
// refuses attempts while open (in every object of the runtime), lets one
// probe through after its cooldown, and closes when the probe succeeds or
// opens again when it fails.
func TestBreakerA7(t *testing.T) {
	w := newWorld(t, 4)
	boom := errors.New("payment API down")
	type step struct {
		object  string
		wait    time.Duration // virtual time to let pass first
		fail    bool          // fn fails
		calls   int           // fn calls made
		errIs   error         // the error Retry returns matches this
		state   agent.BreakerState
		explain string
	}
	steps := []step{
		{object: "a", fail: true, calls: 2, errIs: boom, state: agent.BreakerClosed, explain: "two failures: still closed"},
		{object: "a", fail: true, calls: 1, errIs: boom, state: agent.BreakerOpen, explain: "the third failure within 10 s opens it"},
		{object: "a", fail: false, calls: 0, errIs: agent.ErrCircuitOpen, state: agent.BreakerOpen, explain: "open: refused without calling fn"},
		{object: "b", fail: false, calls: 0, errIs: agent.ErrCircuitOpen, state: agent.BreakerOpen, explain: "shared by every object of the runtime"},
		{object: "a", wait: 5 * time.Second, fail: true, calls: 1, errIs: agent.ErrCircuitOpen, state: agent.BreakerOpen, explain: "after the cooldown a probe goes through; it fails, so it opens again and refuses the retry"},
		{object: "b", wait: 5 * time.Second, fail: false, calls: 1, state: agent.BreakerClosed, explain: "a successful probe closes it"},
		{object: "a", fail: true, calls: 2, errIs: boom, state: agent.BreakerClosed, explain: "closed: failures count afresh"},
		{object: "a", wait: 11 * time.Second, fail: true, calls: 2, errIs: boom, state: agent.BreakerClosed, explain: "failures older than the window do not count"},
	}
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		for i, s := range steps {
			if err := w.rt.Sleep(ctx, s.wait); err != nil {
				return err
			}
			var calls int
			var got error
			var state agent.BreakerState
			err := w.do(ctx, s.object, func(ctx context.Context, st self) error {
				attempts := 3
				if s.fail && s.errIs == boom {
					attempts = s.calls
				}
				got = agent.Retry(ctx, func(ctx context.Context, attempt int) error {
					calls++
					if s.fail {
						return boom
					}
					return nil
				}, agent.RetryOptions{MaxAttempts: new(attempts), Breaker: pay})
				state, _ = agent.Breaker(ctx, "payments")
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, s.calls, calls, "step %d: %s", i, s.explain)
			if s.errIs == nil {
				assert.NoError(t, got, "step %d: %s", i, s.explain)
			} else {
				assert.ErrorIs(t, got, s.errIs, "step %d: %s", i, s.explain)
			}
			assert.Equal(t, s.state, state, "step %d: %s", i, s.explain)
		}
		return nil
	}))
	var moves []string
	for _, e := range w.rt.Events() {
		if e.Kind == object.EventBreaker {
			moves = append(moves, e.Text())
		}
	}
	assert.Equal(t, []string{
		"name=payments state=open",
		"name=payments state=half-open",
		"name=payments state=open",
		"name=payments state=half-open",
		"name=payments state=closed",
	}, moves)
	assert.Len(t, w.events(object.EventBreakerRefused), 3)
}

// A7: while a half-open probe is in flight, other attempts are refused.
func TestBreakerHalfOpenProbeA7(t *testing.T) {
	w := newWorld(t, 4)
	opts := &agent.BreakerOptions{Name: "mail", Failures: 1, Window: time.Second, Cooldown: time.Second}
	var probe, other error
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		err := w.do(ctx, "a", func(ctx context.Context, st self) error {
			_ = agent.Retry(ctx, func(context.Context, int) error { return errors.New("down") }, agent.RetryOptions{MaxAttempts: new(1), Breaker: opts})
			return nil
		})
		if err != nil {
			return err
		}
		if err := w.rt.Sleep(ctx, time.Second); err != nil {
			return err
		}
		g := w.rt.Group(ctx)
		g.Go(func(ctx context.Context) error {
			return w.do(ctx, "a", func(ctx context.Context, st self) error {
				probe = agent.Retry(ctx, func(ctx context.Context, _ int) error {
					return st.Sleep(ctx, time.Second) // the probe takes a while
				}, agent.RetryOptions{Breaker: opts})
				return nil
			})
		})
		g.Go(func(ctx context.Context) error {
			if err := w.rt.Sleep(ctx, 500*time.Millisecond); err != nil {
				return err
			}
			s, err := w.ns.GetByName("b")
			if err != nil {
				return err
			}
			w.job = func(ctx context.Context, st self) error {
				other = agent.Retry(ctx, func(context.Context, int) error { return nil }, agent.RetryOptions{Breaker: opts})
				return nil
			}
			_, err = s.Call(ctx, "Do")
			return err
		})
		return g.Wait()
	}))
	assert.NoError(t, probe, "the probe succeeds and closes the breaker")
	assert.ErrorIs(t, other, agent.ErrCircuitOpen, "an attempt during the probe is refused")
	assert.ErrorContains(t, other, "half-open, its probe is in flight")
}

// A7 bad input: breaker options are checked at the call.
func TestBreakerOptionsA7(t *testing.T) {
	cases := []struct {
		opts agent.BreakerOptions
		err  string
	}{
		{agent.BreakerOptions{Failures: 1, Window: time.Second, Cooldown: time.Second}, "retry.breaker.name must not be empty"},
		{agent.BreakerOptions{Name: "x", Window: time.Second, Cooldown: time.Second}, `retry.breaker "x": failures must be >= 1, got 0`},
		{agent.BreakerOptions{Name: "x", Failures: 1, Cooldown: time.Second}, `retry.breaker "x": window must be > 0, got 0s`},
		{agent.BreakerOptions{Name: "x", Failures: 1, Window: time.Second}, `retry.breaker "x": cooldown must be > 0, got 0s`},
	}
	w := newWorld(t, 1)
	w.inside(func(ctx context.Context, st self) error {
		for _, c := range cases {
			err := agent.Retry(ctx, func(context.Context, int) error { return nil }, agent.RetryOptions{Breaker: &c.opts})
			assert.EqualError(t, err, c.err)
			assert.ErrorIs(t, err, agent.ErrRetryOptions)
		}
		ok := agent.BreakerOptions{Name: "x", Failures: 1, Window: time.Second, Cooldown: time.Second}
		require.NoError(t, agent.Retry(ctx, func(context.Context, int) error { return nil }, agent.RetryOptions{Breaker: &ok}))
		other := ok
		other.Failures = 2
		err := agent.Retry(ctx, func(context.Context, int) error { return nil }, agent.RetryOptions{Breaker: &other})
		assert.ErrorIs(t, err, agent.ErrRetryOptions)
		assert.ErrorContains(t, err, `retry.breaker "x" is already in use with other settings`)
		_, known := agent.Breaker(ctx, "never-used")
		assert.False(t, known)
		return nil
	})
}
