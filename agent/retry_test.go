package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A1: fn sees the attempt number from 1; defaults are 3 attempts; the last
// error comes back as it was returned.
func TestRetryAttemptsA1(t *testing.T) {
	cases := []struct {
		name     string
		failures int // attempts that fail before one succeeds
		opts     agent.RetryOptions
		attempts []int
		err      string
	}{
		{name: "first attempt succeeds", failures: 0, attempts: []int{1}},
		{name: "succeeds on the last default attempt", failures: 2, attempts: []int{1, 2, 3}},
		{name: "three attempts by default, last error surfaced", failures: 9, attempts: []int{1, 2, 3}, err: "attempt 3 failed"},
		{name: "maxAttempts 5", failures: 9, opts: agent.RetryOptions{MaxAttempts: new(5)}, attempts: []int{1, 2, 3, 4, 5}, err: "attempt 5 failed"},
		{name: "maxAttempts 1 never retries", failures: 9, opts: agent.RetryOptions{MaxAttempts: new(1)}, attempts: []int{1}, err: "attempt 1 failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, 1)
			var seen []int
			var last, got error
			w.inside(func(ctx context.Context, st self) error {
				got = agent.Retry(ctx, func(ctx context.Context, attempt int) error {
					seen = append(seen, attempt)
					if attempt <= c.failures {
						last = fmt.Errorf("attempt %d failed", attempt)
						return last
					}
					return nil
				}, c.opts)
				return nil
			})
			assert.Equal(t, c.attempts, seen, "attempt numbers seen by fn")
			if c.err == "" {
				assert.NoError(t, got)
				return
			}
			assert.EqualError(t, got, c.err)
			assert.Same(t, last, got, "the last error itself, not wrapped")
			retries := w.events(object.EventRetry)
			assert.Len(t, retries, len(c.attempts)-1, "one retry event per retried attempt")
			assert.Len(t, w.events(object.EventRetryGaveUp), 1)
		})
	}
}

func TestRetryValueA1(t *testing.T) {
	w := newWorld(t, 1)
	var v string
	var err error
	w.inside(func(ctx context.Context, st self) error {
		v, err = agent.RetryValue(ctx, func(ctx context.Context, attempt int) (string, error) {
			if attempt < 2 {
				return "partial", errors.New("not yet")
			}
			return fmt.Sprint("done on ", attempt), nil
		}, agent.RetryOptions{})
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "done on 2", v, "the value of the successful attempt")
}

// A2: after failed attempt k the delay is a whole number of milliseconds in
// [0, min(2^k·base, cap)), drawn from the seed: the same seed gives the
// same delays, other seeds others.
func TestRetryDelaysA2(t *testing.T) {
	cases := []struct {
		name      string
		base, max int
	}{
		{name: "defaults", base: agent.DefaultBaseDelayMs, max: agent.DefaultMaxDelayMs},
		{name: "base equal to cap", base: 3000, max: 3000},
		{name: "small base", base: 7, max: 50},
	}
	const attempts = 7
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			highest := make([]time.Duration, attempts)
			for seed := range uint64(200) {
				delays := retryDelays(t, seed, attempts, c.base, c.max)
				require.Len(t, delays, attempts-1)
				for i, d := range delays {
					k := i + 1
					limit := time.Duration(min(c.base<<k, c.max)) * time.Millisecond
					require.GreaterOrEqual(t, d, time.Duration(0), "seed %d k %d", seed, k)
					require.Less(t, d, limit, "seed %d: delay after attempt %d must be < min(2^%d·%dms, %dms)", seed, k, k, c.base, c.max)
					require.Zero(t, d%time.Millisecond, "whole milliseconds")
					highest[k] = max(highest[k], d)
				}
				if seed < 3 {
					assert.Equal(t, delays, retryDelays(t, seed, attempts, c.base, c.max), "same seed, same delays")
				}
			}
			for k := 1; k < attempts; k++ {
				limit := time.Duration(min(c.base<<k, c.max)) * time.Millisecond
				assert.Greater(t, highest[k], limit*3/4, "over 200 seeds the draws reach the top of [0, %v)", limit)
			}
		})
	}
}

// retryDelays returns the virtual time between the attempts of a Retry
// whose attempts all fail.
func retryDelays(t *testing.T, seed uint64, attempts, base, max int) []time.Duration {
	w := newWorld(t, seed)
	var at []time.Time
	w.inside(func(ctx context.Context, st self) error {
		_ = agent.Retry(ctx, func(ctx context.Context, attempt int) error {
			at = append(at, st.Now())
			return errors.New("no")
		}, agent.RetryOptions{MaxAttempts: new(attempts), BaseDelayMs: new(base), MaxDelayMs: new(max)})
		return nil
	})
	var out []time.Duration
	for i := 1; i < len(at); i++ {
		out = append(out, at[i].Sub(at[i-1]))
	}
	// The trace says the same.
	for i, e := range w.events(object.EventRetry) {
		assert.Contains(t, e, fmt.Sprintf("attempt=%d delay=%v ", i+1, out[i]))
	}
	return out
}

// A2 and O3: the wait between attempts is a simulated sleep that lets other
// requests into the object.
func TestRetrySleepYieldsTheGateA2(t *testing.T) {
	w := newWorld(t, 3)
	var order []string
	err := w.rt.Run(func(ctx context.Context) error {
		g := w.rt.Group(ctx)
		g.Go(func(ctx context.Context) error {
			return w.do(ctx, "a", func(ctx context.Context, st self) error {
				return agent.Retry(ctx, func(ctx context.Context, attempt int) error {
					order = append(order, fmt.Sprint("attempt ", attempt))
					if attempt == 1 {
						return errors.New("again")
					}
					return nil
				}, agent.RetryOptions{BaseDelayMs: new(1000), MaxDelayMs: new(1000)})
			})
		})
		g.Go(func(ctx context.Context) error {
			if err := w.rt.Sleep(ctx, time.Millisecond); err != nil {
				return err
			}
			s, err := w.ns.GetByName("a")
			if err != nil {
				return err
			}
			_, err = s.Call(ctx, "NoArg")
			order = append(order, "other request")
			return err
		})
		return g.Wait()
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"attempt 1", "other request", "attempt 2"}, order)
}

// A3: ShouldRetry is asked with the next attempt's number, stops the
// retries when it says no, and is not asked once the attempts are used up.
func TestShouldRetryA3(t *testing.T) {
	permanent := errors.New("permanent")
	cases := []struct {
		name     string
		errs     func(attempt int) error
		should   func(err error, next int) bool
		attempts []int
		asked    []int
		err      string
	}{
		{
			name:     "always yes: asked for 2..5, not after the 5th",
			errs:     func(a int) error { return fmt.Errorf("fail %d", a) },
			should:   func(error, int) bool { return true },
			attempts: []int{1, 2, 3, 4, 5}, asked: []int{2, 3, 4, 5}, err: "fail 5",
		},
		{
			name:     "no before attempt 3",
			errs:     func(a int) error { return fmt.Errorf("fail %d", a) },
			should:   func(_ error, next int) bool { return next < 3 },
			attempts: []int{1, 2}, asked: []int{2, 3}, err: "fail 2",
		},
		{
			name: "a permanent error stops at once",
			errs: func(a int) error {
				if a == 2 {
					return permanent
				}
				return fmt.Errorf("fail %d", a)
			},
			should:   func(err error, _ int) bool { return !errors.Is(err, permanent) },
			attempts: []int{1, 2}, asked: []int{2, 3}, err: "permanent",
		},
		{
			name:     "without ShouldRetry every error is retried",
			errs:     func(a int) error { return fmt.Errorf("fail %d", a) },
			attempts: []int{1, 2, 3, 4, 5}, err: "fail 5",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, 2)
			var attempts, asked []int
			var got error
			opts := agent.RetryOptions{MaxAttempts: new(5)}
			if c.should != nil {
				opts.ShouldRetry = func(err error, next int) bool {
					asked = append(asked, next)
					return c.should(err, next)
				}
			}
			w.inside(func(ctx context.Context, st self) error {
				got = agent.Retry(ctx, func(ctx context.Context, attempt int) error {
					attempts = append(attempts, attempt)
					return c.errs(attempt)
				}, opts)
				return nil
			})
			assert.Equal(t, c.attempts, attempts, "attempts made")
			assert.Equal(t, c.asked, asked, "next-attempt numbers ShouldRetry was asked about")
			assert.EqualError(t, got, c.err, "the last error")
		})
	}
}

// A4: options are validated when the call is made, after merging, with the
// rule's messages exactly; fn never runs.
func TestRetryOptionsA4(t *testing.T) {
	cases := []struct {
		name string
		opts agent.RetryOptions
		err  string // "" when valid
	}{
		{name: "defaults", opts: agent.RetryOptions{}},
		{name: "maxAttempts 0", opts: agent.RetryOptions{MaxAttempts: new(0)}, err: "retry.maxAttempts must be >= 1"},
		{name: "maxAttempts negative", opts: agent.RetryOptions{MaxAttempts: new(-3)}, err: "retry.maxAttempts must be >= 1"},
		{name: "baseDelayMs 0", opts: agent.RetryOptions{BaseDelayMs: new(0)}, err: "retry.baseDelayMs must be > 0"},
		{name: "baseDelayMs negative", opts: agent.RetryOptions{BaseDelayMs: new(-100)}, err: "retry.baseDelayMs must be > 0"},
		{name: "maxDelayMs 0", opts: agent.RetryOptions{MaxDelayMs: new(0)}, err: "retry.maxDelayMs must be > 0"},
		{name: "maxDelayMs negative", opts: agent.RetryOptions{MaxDelayMs: new(-1)}, err: "retry.maxDelayMs must be > 0"},
		{name: "base 5000 alone against the default cap 3000", opts: agent.RetryOptions{BaseDelayMs: new(5000)}, err: "retry.baseDelayMs must be <= retry.maxDelayMs"},
		{name: "base above cap", opts: agent.RetryOptions{BaseDelayMs: new(500), MaxDelayMs: new(100)}, err: "retry.baseDelayMs must be <= retry.maxDelayMs"},
		{name: "cap 50 alone below the default base 100", opts: agent.RetryOptions{MaxDelayMs: new(50)}, err: "retry.baseDelayMs must be <= retry.maxDelayMs"},
		{name: "base equal to the default cap", opts: agent.RetryOptions{BaseDelayMs: new(3000)}},
		{name: "base equal to cap", opts: agent.RetryOptions{BaseDelayMs: new(250), MaxDelayMs: new(250)}},
		{name: "base 5000 with a cap of 10000", opts: agent.RetryOptions{BaseDelayMs: new(5000), MaxDelayMs: new(10000)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, 1)
			calls := 0
			var got, queued, scheduled error
			w.inside(func(ctx context.Context, st self) error {
				got = agent.Retry(ctx, func(ctx context.Context, attempt int) error { calls++; return nil }, c.opts)
				_, queued = st.Queue(ctx, "Work", "q", agent.TaskOptions{Retry: c.opts})
				_, scheduled = st.Schedule(ctx, agent.After(time.Hour), "Work", "s", agent.TaskOptions{Retry: c.opts})
				return nil
			})
			if c.err == "" {
				assert.NoError(t, got)
				assert.NoError(t, queued)
				assert.NoError(t, scheduled)
				assert.Equal(t, 1, calls)
				return
			}
			for _, err := range []error{got, queued, scheduled} {
				assert.EqualError(t, err, c.err, "Retry, Queue and Schedule all check at the call")
				assert.ErrorIs(t, err, agent.ErrRetryOptions)
				var oe *agent.RetryOptionsError
				assert.ErrorAs(t, err, &oe)
			}
			assert.Zero(t, calls, "fn never runs with bad options")
		})
	}
}

// A4 from untyped input (JSON, YAML, map[string]any): an explicit 0, a
// negative, a fraction or a non-number gets the matching message.
func TestParseRetryOptionsA4(t *testing.T) {
	const (
		attemptsMin = "retry.maxAttempts must be >= 1"
		attemptsInt = "retry.maxAttempts must be an integer"
		basePos     = "retry.baseDelayMs must be > 0"
		maxPos      = "retry.maxDelayMs must be > 0"
	)
	bad := []struct {
		in  map[string]any
		err string
	}{
		{map[string]any{"maxAttempts": 0}, attemptsMin},
		{map[string]any{"maxAttempts": -2}, attemptsMin},
		{map[string]any{"maxAttempts": 0.5}, attemptsMin},
		{map[string]any{"maxAttempts": 2.5}, attemptsInt},
		{map[string]any{"maxAttempts": float32(1.25)}, attemptsInt},
		{map[string]any{"maxAttempts": "3"}, attemptsMin},
		{map[string]any{"maxAttempts": true}, attemptsMin},
		{map[string]any{"maxAttempts": nil}, attemptsMin},
		{map[string]any{"maxAttempts": math.NaN()}, attemptsMin},
		{map[string]any{"maxAttempts": math.Inf(1)}, attemptsMin},
		{map[string]any{"baseDelayMs": 0}, basePos},
		{map[string]any{"baseDelayMs": -100}, basePos},
		{map[string]any{"baseDelayMs": 0.5}, basePos},
		{map[string]any{"baseDelayMs": "100"}, basePos},
		{map[string]any{"baseDelayMs": math.Inf(1)}, basePos},
		{map[string]any{"maxDelayMs": 0}, maxPos},
		{map[string]any{"maxDelayMs": -1.5}, maxPos},
		{map[string]any{"maxDelayMs": []int{1}}, maxPos},
		{map[string]any{"maxDelayMs": math.NaN()}, maxPos},
		{map[string]any{"maxAttempts": 2, "baseDelayMs": 0, "maxDelayMs": 0}, basePos},
	}
	for _, c := range bad {
		t.Run(fmt.Sprintf("%v", c.in), func(t *testing.T) {
			_, err := agent.ParseRetryOptions(c.in)
			assert.EqualError(t, err, c.err)
			assert.ErrorIs(t, err, agent.ErrRetryOptions)
		})
	}
	t.Run("unknown key", func(t *testing.T) {
		_, err := agent.ParseRetryOptions(map[string]any{"maxAttemps": 3})
		assert.ErrorIs(t, err, agent.ErrRetryOptions)
		assert.EqualError(t, err, `retry: unknown option "maxAttemps" (known: maxAttempts, baseDelayMs, maxDelayMs)`)
	})
	t.Run("numbers of any Go kind, and from JSON", func(t *testing.T) {
		o, err := agent.ParseRetryOptions(map[string]any{"maxAttempts": int64(4), "baseDelayMs": uint8(20), "maxDelayMs": 150.9})
		require.NoError(t, err)
		assert.Equal(t, 4, *o.MaxAttempts)
		assert.Equal(t, 20, *o.BaseDelayMs)
		assert.Equal(t, 150, *o.MaxDelayMs, "a fractional delay is rounded down to whole milliseconds")

		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(`{"maxAttempts": 5, "maxDelayMs": 8000}`), &m))
		o, err = agent.ParseRetryOptions(m)
		require.NoError(t, err)
		assert.Equal(t, 5, *o.MaxAttempts)
		assert.Nil(t, o.BaseDelayMs, "an absent key stays unset")

		dec := json.NewDecoder(strings.NewReader(`{"maxAttempts": 2.5}`))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&m))
		_, err = agent.ParseRetryOptions(m)
		assert.EqualError(t, err, attemptsInt, "json.Number is a number")
	})
	t.Run("the cross-field check waits for the call", func(t *testing.T) {
		o, err := agent.ParseRetryOptions(map[string]any{"baseDelayMs": 5000.0})
		require.NoError(t, err, "5000 is a fine base on its own")
		w := newWorld(t, 1)
		w.inside(func(ctx context.Context, st self) error {
			err = agent.Retry(ctx, func(context.Context, int) error { return nil }, o)
			return nil
		})
		assert.EqualError(t, err, "retry.baseDelayMs must be <= retry.maxDelayMs", "merged with the default cap of 3000")
	})
}

// A5: class defaults override the built-in ones field by field, per-call
// options override both, and the merge happens before validation.
func TestRetryClassDefaultsA5(t *testing.T) {
	stop := errors.New("stop")
	cases := []struct {
		name     string
		class    agent.RetryOptions
		call     agent.RetryOptions
		attempts int    // attempts made by an always-failing fn
		maxDelay int    // every delay is below this many ms
		err      string // a validation error instead
	}{
		{name: "built-in", attempts: 3, maxDelay: 400},
		{name: "class attempts", class: agent.RetryOptions{MaxAttempts: new(5)}, attempts: 5, maxDelay: 1600},
		{name: "call beats class", class: agent.RetryOptions{MaxAttempts: new(5)}, call: agent.RetryOptions{MaxAttempts: new(2)}, attempts: 2, maxDelay: 200},
		{name: "class delays", class: agent.RetryOptions{BaseDelayMs: new(5), MaxDelayMs: new(8)}, attempts: 3, maxDelay: 8},
		{name: "call cap over class base", class: agent.RetryOptions{BaseDelayMs: new(5)}, call: agent.RetryOptions{MaxDelayMs: new(6)}, attempts: 3, maxDelay: 6},
		{name: "class base 5000 alone is rejected against the default cap", class: agent.RetryOptions{BaseDelayMs: new(5000)}, err: "retry.baseDelayMs must be <= retry.maxDelayMs"},
		{name: "class cap lets a call base of 5000 through", class: agent.RetryOptions{MaxDelayMs: new(10000)}, call: agent.RetryOptions{BaseDelayMs: new(5000), MaxAttempts: new(2)}, attempts: 2, maxDelay: 10000},
		{name: "call cap below class base", class: agent.RetryOptions{BaseDelayMs: new(1000)}, call: agent.RetryOptions{MaxDelayMs: new(500)}, err: "retry.baseDelayMs must be <= retry.maxDelayMs"},
		{name: "a bad class field overridden by the call", class: agent.RetryOptions{MaxAttempts: new(0)}, call: agent.RetryOptions{MaxAttempts: new(4)}, attempts: 4, maxDelay: 800},
		{name: "a bad class field not overridden", class: agent.RetryOptions{MaxAttempts: new(0)}, err: "retry.maxAttempts must be >= 1"},
		{name: "class ShouldRetry", class: agent.RetryOptions{ShouldRetry: func(err error, _ int) bool { return !errors.Is(err, stop) }}, attempts: 1},
		{name: "call ShouldRetry beats class", class: agent.RetryOptions{ShouldRetry: func(error, int) bool { return false }}, call: agent.RetryOptions{ShouldRetry: func(error, int) bool { return true }}, attempts: 3, maxDelay: 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, 5)
			w.defaults = c.class
			var at []time.Time
			var got error
			w.inside(func(ctx context.Context, st self) error {
				got = agent.Retry(ctx, func(ctx context.Context, attempt int) error {
					at = append(at, st.Now())
					return stop
				}, c.call)
				return nil
			})
			if c.err != "" {
				assert.EqualError(t, got, c.err)
				assert.Empty(t, at)
				return
			}
			assert.ErrorIs(t, got, stop)
			assert.Len(t, at, c.attempts)
			for i := 1; i < len(at); i++ {
				assert.Less(t, at[i].Sub(at[i-1]), time.Duration(c.maxDelay)*time.Millisecond)
			}
		})
	}
}

// Retry outside an object turn, and with bad arguments, returns errors.
func TestRetryBadInput(t *testing.T) {
	w := newWorld(t, 1)
	err := w.rt.Run(func(ctx context.Context) error {
		err := agent.Retry(ctx, func(context.Context, int) error { return nil }, agent.RetryOptions{})
		assert.ErrorIs(t, err, agent.ErrNotInObject)
		assert.EqualError(t, err, "agent.Retry: not inside an object turn (call it from an object's method, alarm handler or task callback)")
		return nil
	})
	require.NoError(t, err)
	w.inside(func(ctx context.Context, st self) error {
		assert.EqualError(t, agent.Retry(ctx, nil, agent.RetryOptions{}), "agent.Retry: fn is nil")
		_, err := agent.RetryValue[int](ctx, nil, agent.RetryOptions{})
		assert.EqualError(t, err, "agent.RetryValue: fn is nil")
		var nilCtx context.Context
		assert.EqualError(t, agent.Retry(nilCtx, func(context.Context, int) error { return nil }, agent.RetryOptions{}), "agent.Retry: ctx is nil")
		return nil
	})
}

// A2 and S14-like: a cancelled context ends the wait between attempts.
func TestRetryCancelledA2(t *testing.T) {
	w := newWorld(t, 1)
	var got error
	attempts := 0
	w.inside(func(ctx context.Context, st self) error {
		cctx, cancel := context.WithCancel(ctx)
		got = agent.Retry(cctx, func(ctx context.Context, attempt int) error {
			attempts++
			cancel()
			return errors.New("boom")
		}, agent.RetryOptions{})
		return nil
	})
	assert.Equal(t, 1, attempts)
	assert.ErrorIs(t, got, context.Canceled)
	assert.ErrorContains(t, got, "last error: boom")
}

// A2: the bound min(2^k·base, cap) is computed without overflow. Before
// issue 10, base<<k could wrap around to a small positive Duration when a
// large base met many attempts (base 1100000ms, attempt 24), so the wait
// was drawn below a bound far under the cap; and a negative k panicked.
func TestA2_MaxRetryDelayDoesNotWrap(t *testing.T) {
	const ms = time.Millisecond
	maxDelay := time.Duration(math.MaxInt64)
	for k := 0; k <= 40; k++ {
		got := agent.MaxRetryDelay(k, 1100000*ms, maxDelay)
		want := maxDelay
		if k < 23 { // 1100000ms·2^23 still fits in an int64 of nanoseconds
			want = 1100000 * ms << k
		}
		require.Equal(t, want, got, "k=%d", k)
	}
	assert.Equal(t, 100*ms, agent.MaxRetryDelay(-1, 100*ms, 3000*ms))
	assert.Equal(t, 3000*ms, agent.MaxRetryDelay(1, 0, 3000*ms))
	assert.Equal(t, 3000*ms, agent.MaxRetryDelay(5, 100*ms, 3000*ms))
	assert.Equal(t, 1600*ms, agent.MaxRetryDelay(4, 100*ms, 3000*ms))
}
