package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/dosim/dosim/object"

	"github.com/dosim/dosim/internal/clone"
)

// Built-in retry defaults (rule A1): what a field of RetryOptions means when
// neither the call nor the object's class sets it.
const (
	DefaultMaxAttempts = 3
	DefaultBaseDelayMs = 100
	DefaultMaxDelayMs  = 3000
)

// ErrRetryOptions is matched, with errors.Is, by every error for invalid
// retry options (rule A4).
var ErrRetryOptions = errors.New("invalid retry options")

// ErrNotInObject is wrapped by the error of Retry called outside an object
// turn (a method, an alarm handler, a scheduled or queued callback).
var ErrNotInObject = errors.New("not inside an object turn (call it from an object's method, alarm handler or task callback)")

// The messages of rule A4, exactly.
const (
	msgAttemptsMin     = "retry.maxAttempts must be >= 1"
	msgAttemptsInteger = "retry.maxAttempts must be an integer"
	msgBasePositive    = "retry.baseDelayMs must be > 0"
	msgMaxPositive     = "retry.maxDelayMs must be > 0"
	msgBaseAboveMax    = "retry.baseDelayMs must be <= retry.maxDelayMs"
)

// RetryOptionsError is an invalid retry option. For the options of rule A4
// its message is exactly the rule's (for example "retry.maxAttempts must be
// >= 1"); it matches ErrRetryOptions with errors.Is.
type RetryOptionsError struct {
	Field string // the option: "maxAttempts", "baseDelayMs", "maxDelayMs", "breaker", or an unknown key
	Value any    // the value that was refused (after merging with defaults)
	msg   string
}

// Error returns the message, exactly as rule A4 words it.
func (e *RetryOptionsError) Error() string { return e.msg }

// Is reports whether target is ErrRetryOptions.
func (e *RetryOptionsError) Is(target error) bool { return target == ErrRetryOptions }

func optErr(field string, value any, msg string) error {
	return &RetryOptionsError{Field: field, Value: value, msg: msg}
}

// RetryOptions configures Retry, and the retries of a scheduled or queued
// task. After failed attempt k the wait is a whole number of milliseconds
// drawn uniformly from [0, min(2^k·BaseDelayMs, MaxDelayMs)) (rule A2; see
// MaxRetryDelay). A nil field is unset: it takes the object class's default (see
// RetryDefaulter), else the built-in one. Set a field with Go's new:
// RetryOptions{MaxAttempts: new(5)}. An explicit 0 is set, and refused.
type RetryOptions struct {
	// MaxAttempts is the number of attempts, the first included (>= 1;
	// default 3).
	MaxAttempts *int
	// BaseDelayMs is the backoff base in milliseconds (> 0; default 100).
	BaseDelayMs *int
	// MaxDelayMs caps the backoff in milliseconds (> 0 and >= BaseDelayMs;
	// default 3000).
	MaxDelayMs *int
	// ShouldRetry, when set, is asked after a failed attempt whether to go
	// on with attempt nextAttempt; false returns the error at once (rule
	// A3). It is not asked once the attempts are used up. Without it every
	// error is retried. A func cannot be stored, so a scheduled or queued
	// task cannot carry one: there only the class default applies.
	ShouldRetry func(err error, nextAttempt int) bool
	// Breaker, when set, names a circuit breaker that guards every attempt
	// (rule A7, opt-in); see BreakerOptions.
	Breaker *BreakerOptions
}

// RetryDefaulter is implemented by object classes that set their own retry
// defaults (rule A5): each field set here overrides the built-in default,
// and each field set on a call overrides both.
type RetryDefaulter interface {
	RetryDefaults() RetryOptions
}

// over returns o with every field that o leaves unset taken from base.
func (o RetryOptions) over(base RetryOptions) RetryOptions {
	if o.MaxAttempts == nil {
		o.MaxAttempts = base.MaxAttempts
	}
	if o.BaseDelayMs == nil {
		o.BaseDelayMs = base.BaseDelayMs
	}
	if o.MaxDelayMs == nil {
		o.MaxDelayMs = base.MaxDelayMs
	}
	if o.ShouldRetry == nil {
		o.ShouldRetry = base.ShouldRetry
	}
	if o.Breaker == nil {
		o.Breaker = base.Breaker
	}
	return o
}

// retryPolicy is a merged and validated RetryOptions.
type retryPolicy struct {
	attempts  int
	base, cap time.Duration
	should    func(err error, nextAttempt int) bool
	breaker   *BreakerOptions
}

// builtinRetry is the built-in layer of the merge.
func builtinRetry() RetryOptions {
	return RetryOptions{MaxAttempts: new(DefaultMaxAttempts), BaseDelayMs: new(DefaultBaseDelayMs), MaxDelayMs: new(DefaultMaxDelayMs)}
}

// merge returns call over class over the built-in defaults, field by
// field: every numeric field is set.
func merge(class *RetryOptions, call RetryOptions) RetryOptions {
	merged := builtinRetry()
	if class != nil {
		merged = class.over(merged)
	}
	return call.over(merged)
}

// resolve merges call over class over the built-in defaults, field by
// field, and only then validates (rules A4, A5): so a base of 5000 given
// alone is refused against the default cap of 3000.
func resolve(class *RetryOptions, call RetryOptions) (retryPolicy, error) {
	merged := merge(class, call)
	attempts, base, maxMs := *merged.MaxAttempts, *merged.BaseDelayMs, *merged.MaxDelayMs
	switch {
	case attempts < 1:
		return retryPolicy{}, optErr("maxAttempts", attempts, msgAttemptsMin)
	case base <= 0:
		return retryPolicy{}, optErr("baseDelayMs", base, msgBasePositive)
	case maxMs <= 0:
		return retryPolicy{}, optErr("maxDelayMs", maxMs, msgMaxPositive)
	case base > maxMs:
		return retryPolicy{}, optErr("baseDelayMs", base, msgBaseAboveMax)
	}
	if err := merged.Breaker.validate(); err != nil {
		return retryPolicy{}, err
	}
	return retryPolicy{
		attempts: attempts,
		base:     msDuration(base),
		cap:      msDuration(maxMs),
		should:   merged.ShouldRetry,
		breaker:  merged.Breaker,
	}, nil
}

// MaxRetryDelay returns the bound of the wait after failed attempt k (from
// 1) of Retry, or of a scheduled or queued task, with backoff base base and
// cap maxDelay: min(2^k·base, maxDelay) (rule A2). The wait is a whole
// number of milliseconds drawn uniformly from [0, MaxRetryDelay(k, base,
// maxDelay)), the bound excluded, from the runtime's seeded source; with the
// defaults (100ms, 3000ms) the bounds are 200ms, 400ms, 800ms, ... up to 3s.
//
// k below 0 counts as 0. A base that is not positive gives maxDelay, as
// does a product too large for a Duration.
func MaxRetryDelay(k int, base, maxDelay time.Duration) time.Duration {
	k = max(k, 0)
	if k > 40 || base <= 0 || base > maxDelay>>k { // base·2^k > maxDelay, without overflow
		return maxDelay
	}
	return base << k
}

// retryDelay draws the wait after failed attempt k from rng: a whole number
// of milliseconds uniform in [0, MaxRetryDelay(k, base, maxDelay)) (rule A2).
func retryDelay(rng *rand.Rand, k int, base, maxDelay time.Duration) time.Duration {
	capMs := MaxRetryDelay(k, base, maxDelay).Milliseconds()
	if capMs <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(capMs)) * time.Millisecond
}

// msDuration converts whole milliseconds to a Duration, saturating.
func msDuration(ms int) time.Duration {
	if int64(ms) > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// classDefaults returns the object class's retry defaults, if it has any.
func (s *turn) classDefaults() *RetryOptions {
	inst, err := s.host.Instance()
	if err != nil || inst == nil {
		return nil
	}
	if d, ok := inst.(RetryDefaulter); ok {
		o := d.RetryDefaults()
		return &o
	}
	return nil
}

var retryKeys = []string{"maxAttempts", "baseDelayMs", "maxDelayMs"}

// ParseRetryOptions reads retry options from untyped input, as decoded from
// JSON or YAML: the keys "maxAttempts", "baseDelayMs" and "maxDelayMs",
// each a number: a float64 or a json.Number (from encoding/json, with or
// without UseNumber), an int or uint64 (from YAML), or any Go integer or
// float kind, as for stub.ParseOptions. It checks each field on its own with rule A4's messages:
// maxAttempts that is not a finite number or is below 1 gets
// "retry.maxAttempts must be >= 1", a fraction "retry.maxAttempts must be
// an integer"; a delay that is not a finite number or is not above 0 gets
// "retry.baseDelayMs must be > 0" (or maxDelayMs). As in the Agents SDK a
// fractional delay is rounded down to whole milliseconds, and refused when
// that leaves 0. An unknown key is an error too. The cross-field check
// (base <= cap) waits for the call, after merging with the defaults.
// Every error matches ErrRetryOptions.
func ParseRetryOptions(m map[string]any) (RetryOptions, error) {
	var o RetryOptions
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(retryKeys, k) {
			return RetryOptions{}, optErr(k, m[k], fmt.Sprintf("retry: unknown option %q (known: %s)", k, strings.Join(retryKeys, ", ")))
		}
	}
	for _, k := range retryKeys {
		v, present := m[k]
		if !present {
			continue
		}
		f, isNum := clone.Number(v)
		finite := isNum && !math.IsNaN(f) && !math.IsInf(f, 0)
		switch k {
		case "maxAttempts":
			if !finite || f < 1 {
				return RetryOptions{}, optErr(k, v, msgAttemptsMin)
			}
			if f != math.Trunc(f) {
				return RetryOptions{}, optErr(k, v, msgAttemptsInteger)
			}
			o.MaxAttempts = new(int(min(f, math.MaxInt32)))
		case "baseDelayMs", "maxDelayMs":
			msg := msgBasePositive
			if k == "maxDelayMs" {
				msg = msgMaxPositive
			}
			if !finite || f < 1 { // below 1 ms rounds down to 0
				return RetryOptions{}, optErr(k, v, msg)
			}
			ms := new(int(min(math.Floor(f), math.MaxInt64/float64(time.Millisecond))))
			if k == "baseDelayMs" {
				o.BaseDelayMs = ms
			} else {
				o.MaxDelayMs = ms
			}
		}
	}
	return o, nil
}

// Retry calls fn until it succeeds or the attempts run out, and returns nil
// or the last error, unwrapped (rules A1-A5). fn receives the attempt
// number, from 1. After failed attempt k it waits a whole number of
// milliseconds drawn uniformly from [0, min(2^k·base, cap)) from the
// runtime's seeded source (rule A2, MaxRetryDelay); the wait is a simulated sleep, so
// other requests may enter the object meanwhile (rule O3). opts are merged
// field by field over the class's RetryDefaults and the built-in defaults,
// then validated before fn is first called (rules A4, A5).
//
// Retry must run inside an object turn: a method, an Alarm handler, or a
// scheduled or queued callback. If ctx is cancelled during a wait, Retry
// returns an error wrapping the context's error and the last error. A panic
// in fn is not caught: it fails the turn as any panic does. With a Breaker,
// an attempt the breaker refuses ends Retry with an error wrapping
// ErrCircuitOpen.
func Retry(ctx context.Context, fn func(ctx context.Context, attempt int) error, opts RetryOptions) error {
	if fn == nil {
		return errors.New("agent.Retry: fn is nil")
	}
	_, err := RetryValue(ctx, func(ctx context.Context, attempt int) (struct{}, error) {
		return struct{}{}, fn(ctx, attempt)
	}, opts)
	return err
}

// RetryValue is Retry for a function that returns a value: it returns the
// value of the first successful attempt.
func RetryValue[T any](ctx context.Context, fn func(ctx context.Context, attempt int) (T, error), opts RetryOptions) (T, error) {
	var zero, out T
	if fn == nil {
		return zero, errors.New("agent.RetryValue: fn is nil")
	}
	st, err := turnOf(ctx, "agent.Retry")
	if err != nil {
		return zero, err
	}
	p, err := resolve(st.classDefaults(), opts)
	if err != nil {
		return zero, err
	}
	r, err := st.newRetrier(p, nil)
	if err != nil {
		return zero, err
	}
	_, err = r.loop(ctx, func(ctx context.Context, attempt int) error {
		v, err := fn(ctx, attempt)
		if err == nil {
			out = v
		}
		return err
	})
	if err != nil {
		return zero, err
	}
	return out, nil
}

// retrier runs the attempts of one retry policy, for Retry and for tasks.
type retrier struct {
	s    *turn
	p    retryPolicy
	br   *breaker
	task *taskRecord // the task whose attempts these are; nil for Retry
}

func (s *turn) newRetrier(p retryPolicy, task *taskRecord) (*retrier, error) {
	r := &retrier{s: s, p: p, task: task}
	if p.breaker != nil {
		br, err := s.breakerFor(*p.breaker)
		if err != nil {
			return nil, err
		}
		r.br = br
	}
	return r, nil
}

// errTaskGone stops the attempts of a task cancelled while it was running.
var errTaskGone = errors.New("task cancelled while it ran")

// step makes attempt number attempt, which the breaker has allowed. It
// reports whether another attempt should follow and the delay before it,
// and returns fn's error.
func (r *retrier) step(ctx context.Context, attempt int, fn func(ctx context.Context, attempt int) error) (again bool, delay time.Duration, err error) {
	err = r.call(ctx, attempt, fn)
	switch {
	case err == nil, errors.Is(err, errTaskGone):
		return false, 0, err
	case attempt >= r.p.attempts:
		r.s.event(r.event(object.EventRetryGaveUp, object.Event{Attempt: attempt, Reason: "attempts-used-up", Err: err.Error()}))
		return false, 0, err
	case r.task != nil && stopsRetries(err): // a code-update or memory-limit reset (rule A3)
		r.s.event(r.event(object.EventRetryGaveUp, object.Event{Attempt: attempt, Reason: "platform-reset", Err: err.Error()}))
		return false, 0, err
	case r.p.should != nil && !r.p.should(err, attempt+1):
		r.s.event(r.event(object.EventRetryGaveUp, object.Event{Attempt: attempt, Reason: "should-retry-false", Err: err.Error()}))
		return false, 0, err
	}
	delay = retryDelay(r.s.host.Rand(), attempt, r.p.base, r.p.cap)
	r.s.event(r.event(object.EventRetry, object.Event{Attempt: attempt, Delay: delay, Err: err.Error()}))
	return true, delay, err
}

// call runs fn once, telling the breaker how it went (a panic is a failure).
func (r *retrier) call(ctx context.Context, attempt int, fn func(ctx context.Context, attempt int) error) (err error) {
	if r.br == nil {
		return fn(ctx, attempt)
	}
	done := false
	defer func() {
		if !done {
			r.br.record(r.s, errors.New("panic"))
		}
	}()
	err = fn(ctx, attempt)
	done = true
	if errors.Is(err, errTaskGone) {
		r.br.abandon() // no attempt was made
		return err
	}
	r.br.record(r.s, err)
	return err
}

// loop makes attempts until one succeeds or no other should follow, with a
// simulated sleep between them. It returns the number of attempts made and
// the last error.
func (r *retrier) loop(ctx context.Context, fn func(ctx context.Context, attempt int) error) (int, error) {
	var last error
	for attempt := 1; ; attempt++ {
		if err := r.br.allow(r.s); err != nil {
			if last != nil {
				err = fmt.Errorf("%w (last error: %w)", err, last)
			}
			return attempt - 1, err
		}
		again, delay, err := r.step(ctx, attempt, fn)
		if !again {
			return attempt, err
		}
		last = err
		if serr := r.s.host.Sleep(ctx, delay); serr != nil {
			return attempt, fmt.Errorf("agent.Retry: waiting before attempt %d: %w (last error: %w)", attempt+1, serr, err)
		}
	}
}

// event is e of kind, about the retrier's task if it has one.
func (r *retrier) event(kind object.EventKind, e object.Event) object.Event {
	if r.task != nil {
		return r.task.event(kind, e)
	}
	e.Kind = kind
	return e
}
