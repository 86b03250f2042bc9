package stub_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S9, issue 9: attempt 1 is not delivered, attempt 2 spends five seconds
// on the link, the call's timeout is 1 s. The call fails at 1 s with the
// first error; the cancelled retry must never arrive. The old code
// delivered it at 5.075 s and AddOne ran anyway.
func TestS9_CancelledRetryNeverArrivesLater(t *testing.T) {
	w := newWorld(t, 11, rule("Add", 1, transport.NotDelivered), transport.Rule{Method: "Add", Attempt: 2, Delay: 5 * time.Second})
	s := w.stub(t, stub.TimeoutMs(1000))
	var callErr error
	var failedAt time.Duration
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, callErr = s.Call(ctx, "Add")
		failedAt = w.rt.Elapsed()
		return nil
	}))
	require.Error(t, callErr)
	assert.Contains(t, callErr.Error(), "never reached it")
	assert.Equal(t, time.Second, failedAt, "the call gives up at its deadline")
	c := w.rt.Calls()[0]
	assert.Equal(t, transport.OutcomeTimeout, c.Outcome)
	require.Len(t, c.Attempts, 2)
	retry := c.Attempts[1]
	assert.True(t, retry.Cancelled)
	assert.False(t, retry.Delivered, "the cancelled retry never arrives")
	assert.False(t, retry.Executed)
	assert.Equal(t, 0, c.Executions())
	assert.Equal(t, 0, w.stored(t, "n"), "AddOne never ran")
}

// writer writes, sleeps, then writes again: a retry cancelled while it
// sleeps keeps its first write and sees its context cancelled.
type writer struct{ st *object.State }

func (o *writer) Methods() object.Methods {
	return object.Methods{"Write": object.Func(func(ctx context.Context) error {
		if err := o.st.Storage().Put(ctx, "before", 1); err != nil {
			return err
		}
		if err := o.st.Sleep(ctx, 5*time.Second); err != nil {
			_ = o.st.Storage().Put(ctx, "saw", err.Error())
			return err
		}
		return o.st.Storage().Put(ctx, "after", 1)
	})}
}

// S9: a retry already running at the object when the call gives up sees
// its ctx cancelled; what it wrote stays, and the record says it was
// delivered, executed and cancelled.
func TestS9_RunningRetrySeesItsContextCancelled(t *testing.T) {
	rt := runtime.New(runtime.WithSeed(3), runtime.WithFaults(transport.Plan(
		rule("Write", 1, transport.NotDelivered),
		transport.Rule{Method: "Write", Attempt: 2, Delay: 10 * time.Millisecond},
	)))
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	ns := rt.Namespace("W", func(st *object.State) object.Object { return &writer{st: st} })
	s, err := ns.GetByName("w", stub.TimeoutMs(1000))
	require.NoError(t, err)
	var callErr error
	require.NoError(t, rt.Run(func(ctx context.Context) error { _, callErr = s.Call(ctx, "Write"); return nil }))
	require.Error(t, callErr)
	c := rt.Calls()[0]
	require.Len(t, c.Attempts, 2)
	retry := c.Attempts[1]
	assert.True(t, retry.Delivered && retry.Executed && retry.Cancelled, "%+v", retry)
	assert.Equal(t, time.Second, retry.End, "the turn ended when its context was cancelled, at the deadline")
	st := ns.Storage(ns.IDFromName("w"))
	var before int
	var saw string
	ok, err := st.Get(context.Background(), "before", &before)
	require.NoError(t, err)
	assert.True(t, ok, "what it already wrote stays")
	ok, err = st.Get(context.Background(), "saw", &saw)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, context.Canceled.Error(), saw)
	ok, err = st.Get(context.Background(), "after", &before)
	require.NoError(t, err)
	assert.False(t, ok, "nothing after the cancellation")
}

// S9: a call's deadline (its start plus its timeout) used to wrap around
// for a call made within its timeout of the end of virtual time, and its
// retry was refused as if the deadline had passed. The deadline saturates
// at the end of virtual time, and the retry goes.
func TestS9_ACallNearTheEndOfVirtualTimeStillRetries(t *testing.T) {
	w := newWorld(t, 1, rule("Set", 1, transport.LoseResponse))
	s := w.stub(t)
	require.NoError(t, w.rt.Advance(runtime.MaxElapsed-5*time.Second))
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Set", 7)
		return err
	}))
	c := w.rt.Calls()[0]
	assert.Equal(t, transport.OutcomeRecovered, c.Outcome)
	require.Len(t, c.Attempts, 2)
	assert.Equal(t, 7, w.stored(t, "v"))
}
