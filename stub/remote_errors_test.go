package stub_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// quotaError is a user's own error type, plain data: it crosses the
// boundary as a copy.
type quotaError struct {
	Code  string
	Left  []int // a slice, so that sharing memory would show
	Where *string
}

func (e *quotaError) Error() string { return fmt.Sprintf("quota %s (left %v)", e.Code, e.Left) }

// funcError holds a func: not plain data, it crosses as its text.
type funcError struct{ retry func() }

func (e *funcError) Error() string { return "cannot be copied" }

// loopError unwraps to itself; panicky's Unwrap panics.
type (
	loopError struct{ N int }
	panicky   struct{ N int }
)

func (e *loopError) Error() string { return "loops" }
func (e *loopError) Unwrap() error { return e }
func (e *panicky) Error() string   { return "panics" }
func (e *panicky) Unwrap() error   { panic("unwrap") }

// thrower is an object whose methods return errors of every kind, and
// keeps the last one it returned.
type thrower struct {
	other *runtime.Namespace
	last  *quotaError
	runs  int
}

func (o *thrower) Methods() object.Methods {
	return object.Methods{
		"Flagged": object.Func(func(ctx context.Context) error {
			o.runs++
			return fmt.Errorf("passing on: %w", &stub.Error{Retryable: true, Overloaded: true, Msg: "try later"})
		}),
		"Quota": object.Func(func(ctx context.Context) error {
			o.runs++
			where := "eu"
			o.last = &quotaError{Code: "E_QUOTA", Left: []int{1, 2}, Where: &where}
			return fmt.Errorf("charging: %w", o.last)
		}),
		"Func":    object.Func(func(ctx context.Context) error { return &funcError{retry: func() {}} }),
		"Loop":    object.Func(func(ctx context.Context) error { return &loopError{N: 1} }),
		"Panicky": object.Func(func(ctx context.Context) error { return &panicky{N: 2} }),
		// Relay calls OTHER/b, which the fault plan overloads, and returns
		// its error as it is.
		"Relay": object.Func(func(ctx context.Context) error {
			s, err := o.other.GetByName("b")
			if err != nil {
				return err
			}
			_, err = s.Call(ctx, "Ping")
			return err
		}),
	}
}

type pinger struct{}

func (pinger) Methods() object.Methods {
	return object.Methods{"Ping": object.Func(func(ctx context.Context) error { return nil })}
}

// throwerWorld is a runtime with a THROWER namespace, an OTHER one, and
// the thrower instance the calls reach.
func throwerWorld(t *testing.T, rules ...transport.Rule) (*runtime.Runtime, *stub.Stub, func() *thrower) {
	t.Helper()
	rt := runtime.New(runtime.WithSeed(3), runtime.WithLogger(zaptest.NewLogger(t)), runtime.WithFaults(transport.Plan(rules...)))
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	other := rt.Namespace("OTHER", func(*object.State) object.Object { return pinger{} })
	ns := rt.Namespace("THROWER", func(*object.State) object.Object { return &thrower{other: other} })
	s, err := ns.GetByName("a")
	require.NoError(t, err)
	return rt, s, func() *thrower { return ns.Instance(ns.IDFromName("a")).(*thrower) }
}

// S4: an error thrown by object code reaches the caller with its own
// properties: one carrying retryable = true or overloaded arrives with
// them and with remote = true, and is not retried (one run). Source: real
// workerd 1.20261117.1 (a thrown error's retryable, overloaded and code
// properties arrive with remote = true); workerd's
// src/workerd/api/actor-call-retry-test.c++ retries only disconnects, never
// the object's own errors.
func TestS4_RemoteErrorKeepsItsFlags(t *testing.T) {
	rt, s, inst := throwerWorld(t)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Flagged")
		var e *stub.Error
		require.True(t, errors.As(err, &e), "%v", err)
		assert.True(t, e.Remote, "remote = true")
		assert.True(t, e.Retryable, "the thrown error's retryable = true arrives")
		assert.True(t, e.Overloaded, "the thrown error's overloaded arrives")
		assert.False(t, e.DurableObjectReset)
		assert.Contains(t, e.Msg, "object error: passing on: ")
		assert.Contains(t, e.Msg, "try later")
		assert.ErrorIs(t, err, stub.ErrRemote)
		assert.NoError(t, s.Broken(), "the object's answer does not break the stub (L2)")
		return nil
	}))
	calls := rt.Calls()
	require.Len(t, calls, 1)
	assert.Len(t, calls[0].Attempts, 1, "a remote error is never retried, even flagged retryable")
	assert.Equal(t, transport.OutcomeNotRetryable, calls[0].Outcome)
	assert.Equal(t, 1, inst().runs, "one run")
}

// S4: an object that passes on the error of a call it made (another object
// refused it as overloaded) gives its caller that error's flags, remote
// as well, and the caller does not retry. Source: real workerd
// 1.20261117.1.
func TestS4_APassedOnOverloadedErrorArrivesRemoteAndOverloaded(t *testing.T) {
	rt, s, _ := throwerWorld(t, transport.Rule{Namespace: "OTHER", Fault: transport.Overloaded})
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Relay")
		var e *stub.Error
		require.True(t, errors.As(err, &e), "%v", err)
		assert.True(t, e.Remote && e.Overloaded, "remote and overloaded: %+v", e)
		assert.False(t, e.Retryable)
		assert.Contains(t, e.Msg, "Durable Object is overloaded. Too many requests queued.")
		return nil
	}))
	for _, c := range rt.Calls() {
		assert.Len(t, c.Attempts, 1, "%s: not retried", c.Method)
	}
}

// O5, S4: a user's own error type crosses as a copy, as results do:
// errors.As finds it at the caller, with its fields (the platform's thrown
// error arrives with its code), and the caller's copy shares no memory
// with the object's error. Source: real workerd 1.20261117.1.
func TestO5_UserErrorTypeCrossesAsACopy(t *testing.T) {
	rt, s, inst := throwerWorld(t)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Quota")
		var q *quotaError
		require.True(t, errors.As(err, &q), "errors.As finds the user's type: %v", err)
		assert.Equal(t, "E_QUOTA", q.Code)
		assert.Equal(t, []int{1, 2}, q.Left)
		assert.Equal(t, "eu", *q.Where)
		assert.NotSame(t, inst().last, q, "a copy, not the object's error")
		q.Code, q.Left[0], *q.Where = "changed", 99, "us"
		var e *stub.Error
		require.True(t, errors.As(err, &e))
		assert.True(t, e.Remote)
		assert.Equal(t, "object error: charging: quota E_QUOTA (left [1 2])", e.Msg, "the text as today")
		assert.ErrorIs(t, err, stub.ErrRemote)
		return nil
	}))
	last := inst().last
	assert.Equal(t, "E_QUOTA", last.Code, "the object's error is its own")
	assert.Equal(t, []int{1, 2}, last.Left)
	assert.Equal(t, "eu", *last.Where)
	c := rt.Calls()[0]
	assert.Equal(t, "object error: charging: quota E_QUOTA (left [1 2])", c.ObjectErr)
	assert.Contains(t, c.Err, "quota E_QUOTA (left [1 2])", "the record is the caller's no more than the object's")
	assert.Len(t, c.Attempts, 1)
}

// O5: an error that is not plain data (it holds a func) cannot be copied:
// it crosses as its text only, Remote as any object error.
func TestO5_AnErrorThatIsNotPlainDataCrossesAsItsText(t *testing.T) {
	rt, s, _ := throwerWorld(t)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Func")
		var fe *funcError
		assert.False(t, errors.As(err, &fe), "nothing to find: only the text crossed")
		var e *stub.Error
		require.True(t, errors.As(err, &e))
		assert.True(t, e.Remote)
		assert.Equal(t, "object error: cannot be copied", e.Msg)
		return nil
	}))
}

// S4, H2: an error whose chain loops (it unwraps to itself) or whose
// Unwrap panics still crosses, and the caller's errors.As and errors.Is
// neither loop nor panic: the copy is walked by hand, 64 errors at most.
func TestS4_AnErrorWhoseChainLoopsOrPanicsCrossesSafely(t *testing.T) {
	rt, s, _ := throwerWorld(t)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Loop")
		var l *loopError
		require.True(t, errors.As(err, &l), "%v", err)
		assert.Equal(t, 1, l.N)
		assert.ErrorIs(t, err, stub.ErrRemote)
		var q *quotaError
		assert.False(t, errors.As(err, &q))

		_, err = s.Call(ctx, "Panicky")
		var p *panicky
		require.True(t, errors.As(err, &p), "found before its Unwrap is called: %v", err)
		assert.False(t, errors.As(err, &q), "the walk ends at the panic")
		assert.ErrorIs(t, err, stub.ErrRemote)
		return nil
	}))
}
