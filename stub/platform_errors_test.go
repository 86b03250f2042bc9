package stub_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S4: calling a method the object does not have is the object's answer,
// as on the platform: the caller's error is the platform's TypeError
// `The RPC receiver does not implement the method "nope".`, flagged
// remote, not retried, and the stub is not broken (L2). Source: real
// workerd 1.20261117.1.
func TestS4_AMissingMethodIsARemoteErrorInThePlatformsWords(t *testing.T) {
	const want = `The RPC receiver does not implement the method "nope".` // real workerd 1.20261117.1
	w := newWorld(t, 1)
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "nope")
		var e *stub.Error
		require.True(t, errors.As(err, &e), "%v", err)
		assert.True(t, e.Remote, "remote = true")
		assert.False(t, e.Retryable || e.Overloaded || e.DurableObjectReset)
		assert.Contains(t, e.Msg, want)
		assert.Contains(t, err.Error(), want)
		require.ErrorIs(t, err, object.ErrNoMethod)
		assert.NoError(t, s.Broken(), "the stub is not broken")
		_, err = s.Call(ctx, "Set", 1)
		return err
	}))
	calls := w.rt.Calls()
	require.Len(t, calls, 2)
	assert.Len(t, calls[0].Attempts, 1, "not retried")
	assert.Equal(t, 1, w.stored(t, "v"))
}

// S4: an overloaded refusal says what the platform says, `Durable Object
// is overloaded. Too many requests queued.` (real workerd 1.20261117.1),
// and is never retried.
func TestS4_OverloadedInThePlatformsWords(t *testing.T) {
	const want = "Durable Object is overloaded. Too many requests queued." // real workerd 1.20261117.1
	w := newWorld(t, 1, transport.Rule{Method: "Add", Attempt: 1, Fault: transport.Overloaded})
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Add")
		var e *stub.Error
		require.True(t, errors.As(err, &e), "%v", err)
		assert.True(t, e.Overloaded)
		assert.Equal(t, want, e.Msg)
		return nil
	}))
	assert.Len(t, w.rt.Calls()[0].Attempts, 1, "not retried")
}
