package verify_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// optional is a class with every optional interface the runtime and
// package object look for on an instance: Alarmer, ErrorHandler,
// RetryDefaulter and http.Handler. Each method leans on one of them.
type optional struct {
	agent.Agent
	st *object.State
}

var (
	_ object.Alarmer       = (*optional)(nil)
	_ agent.ErrorHandler   = (*optional)(nil)
	_ agent.RetryDefaulter = (*optional)(nil)
)

func (o *optional) Methods() object.Methods {
	return object.Methods{
		"Hit":      object.Retryable(o.Hit), // sets the alarm, then counts: not idempotent
		"Remind":   object.Retryable(o.Remind),
		"Kick":     object.Retryable(o.Kick), // queues a task that fails: OnError counts it
		"Fail":     object.Func(o.Fail),
		"Attempts": object.Retryable(o.Attempts), // agent.Retry with the class's defaults
	}
}

func (o *optional) Alarm(ctx context.Context, info object.AlarmInfo) error { return nil }

func (o *optional) OnError(ctx context.Context, err error) { _ = o.bump(ctx, "failed") }

func (o *optional) RetryDefaults() agent.RetryOptions {
	return agent.RetryOptions{MaxAttempts: new(5), BaseDelayMs: new(1), MaxDelayMs: new(1)}
}

func (o *optional) bump(ctx context.Context, key string) error {
	n, _, err := object.GetAs[int](ctx, o.st.Storage(), key)
	if err != nil {
		return err
	}
	return o.st.Storage().Put(ctx, key, n+1)
}

// Hit sets the alarm a minute from now, then counts one hit.
func (o *optional) Hit(ctx context.Context) error {
	if err := o.st.SetAlarm(ctx, o.st.Now().Add(time.Minute)); err != nil {
		return err
	}
	return o.bump(ctx, "hits")
}

// Remind sets the alarm for a fixed instant: idempotent.
func (o *optional) Remind(ctx context.Context) error {
	return o.st.SetAlarm(ctx, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
}

// Kick queues Fail once, with one attempt: its error goes to OnError.
func (o *optional) Kick(ctx context.Context) error {
	_, err := o.Queue(ctx, "Fail", nil, agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(1)}})
	return err
}

func (o *optional) Fail(ctx context.Context, payload any) error { return errors.New("always") }

// Attempts reports how many attempts agent.Retry made with no options of
// its own: the class's default (5), not the built-in one (3).
func (o *optional) Attempts(ctx context.Context) (int, error) {
	n := 0
	_ = agent.Retry(ctx, func(ctx context.Context, attempt int) error {
		n = attempt
		return errors.New("not yet")
	}, agent.RetryOptions{})
	return n, nil
}

func optionalNS(t *testing.T) *runtime.Namespace {
	rt := runtime.New()
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	return rt.Namespace("OPT", func(st *object.State) object.Object { return &optional{st: st} })
}

// Rule C6: the verifier runs the class as it is, so State.SetAlarm finds
// its Alarm method. A marked method that sets the alarm and counts up is
// dangerous (it used to fail in both runs with "has no Alarm method" and
// be judged ok); one that sets a fixed alarm could stay marked.
func TestC6_AlarmSettingMethodIsJudged(t *testing.T) {
	ns := optionalNS(t)
	rep, err := verify.Idempotent(ns, "Hit", nil, verify.Options{})
	require.NoError(t, err)
	assert.Empty(t, rep.Once.Err, "SetAlarm works under verify")
	assert.Equal(t, verify.VerdictDanger, rep.Verdict, rep.Diff)
	assert.Equal(t, "storage \"hits\": once 1, twice 2\n", rep.Diff)

	rep, err = verify.Idempotent(ns, "Remind", nil, verify.Options{})
	require.NoError(t, err)
	assert.Empty(t, rep.Once.Err+rep.Twice.Err)
	assert.Equal(t, verify.VerdictOK, rep.Verdict, rep.Diff)
}

// Rules C6 and A5: a class's RetryDefaults hold under verify: agent.Retry
// makes the class's 5 attempts, not the built-in 3.
func TestC6_ClassRetryDefaultsHold(t *testing.T) {
	rep, err := verify.Idempotent(optionalNS(t), "Attempts", nil, verify.Options{})
	require.NoError(t, err)
	assert.Equal(t, 5, rep.Once.Result)
	assert.Equal(t, 5, rep.Twice.Result)
	assert.Equal(t, verify.VerdictOK, rep.Verdict, rep.Diff)
}

// Rules C6 and A6: OnError receives the error of a task the method queued:
// twice queues twice, and OnError counts two failures.
func TestC6_OnErrorRunsUnderVerify(t *testing.T) {
	rep, err := verify.Idempotent(optionalNS(t), "Kick", nil, verify.Options{})
	require.NoError(t, err)
	assert.Equal(t, verify.VerdictDanger, rep.Verdict)
	assert.Contains(t, rep.Diff, "storage \"failed\": once 1, twice 2\n")
}

// refuser fails in ways that leave nothing to compare, and in one way
// that does.
type refuser struct{ st *object.State }

func (r *refuser) Methods() object.Methods {
	return object.Methods{
		"Refuse":     object.Retryable(r.Refuse),
		"Shrug":      object.Func(r.Refuse), // unmarked: was "could be marked"
		"LongKey":    object.Retryable(r.LongKey),
		"Block":      object.Retryable(r.Block),
		"WriteFail":  object.Retryable(r.WriteFail),
		"WriteFail2": object.Func(r.WriteFail),
	}
}

func (r *refuser) Refuse(ctx context.Context) error { return errors.New("closed on sundays") }

func (r *refuser) LongKey(ctx context.Context) error {
	return r.st.Storage().Put(ctx, strings.Repeat("k", object.MaxSQLitePairBytes+1), 1)
}

// Block resets the object: BlockConcurrencyWhile's function fails (L6).
func (r *refuser) Block(ctx context.Context) error {
	return r.st.BlockConcurrencyWhile(ctx, func(ctx context.Context) error { return errors.New("migration failed") })
}

// WriteFail counts, then fails: each run writes once more.
func (r *refuser) WriteFail(ctx context.Context) error {
	n, _, err := object.GetAs[int](ctx, r.st.Storage(), "n")
	if err != nil {
		return err
	}
	if err := r.st.Storage().Put(ctx, "n", n+1); err != nil {
		return err
	}
	return fmt.Errorf("failed after writing %d", n+1)
}

func refuserNS(t *testing.T) *runtime.Namespace {
	rt := runtime.New()
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	return rt.Namespace("REF", func(st *object.State) object.Object { return &refuser{st: st} })
}

// Rule C6: a call that failed in both runs is inconclusive, not ok and
// not "could be marked", and the report keeps both errors; so is a
// reset inside the method, with the reset's message, and it is a verdict,
// not an error. A marked method whose failing runs still wrote twice is
// dangerous all the same.
func TestC6_FailuresAndResetsAreInconclusive(t *testing.T) {
	ns := refuserNS(t)
	for _, tc := range []struct {
		method, verdict, reason string
		mentions                []string
	}{
		{"Refuse", verify.VerdictInconclusive, verify.ReasonBothFailed,
			[]string{"the call failed in both runs (once: object error: closed on sundays; twice: object error: closed on sundays)"}},
		{"Shrug", verify.VerdictInconclusive, verify.ReasonBothFailed,
			[]string{"the call failed in both runs (once: object error: closed on sundays; twice: object error: closed on sundays)"}},
		{"LongKey", verify.VerdictInconclusive, verify.ReasonBothFailed,
			[]string{"once: object error: ", "A key of size 2000001 was provided.", "twice: object error: "}},
		{"Block", verify.VerdictInconclusive, verify.ReasonReset,
			[]string{"the object was reset during the call (once: migration failed; twice: migration failed)", "cannot be compared"}},
		{"WriteFail", verify.VerdictDanger, "",
			[]string{"result: once error object error: failed after writing 1, twice error object error: failed after writing 2", `storage "n": once 1, twice 2`}},
		{"WriteFail2", verify.VerdictInconclusive, verify.ReasonBothFailed,
			[]string{"the call failed in both runs", `storage "n": once 1, twice 2`}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			rep, err := verify.Idempotent(ns, tc.method, nil, verify.Options{})
			require.NoError(t, err, "what the method does is a verdict, not an error")
			assert.Equal(t, tc.verdict, rep.Verdict, rep.Diff)
			assert.Equal(t, tc.reason, rep.Reason)
			assert.False(t, rep.Idempotent, "nothing inconclusive is called idempotent")
			assert.True(t, rep.Once.Failed(), "the once run's error is kept")
			for _, m := range tc.mentions {
				assert.Contains(t, rep.Diff, m)
			}
		})
	}
}
