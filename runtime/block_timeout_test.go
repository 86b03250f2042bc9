package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blocker blocks its input gate for a while (Block), answers (Ping), and
// passes on a flagged error (Pass).
type blocker struct{ st *object.State }

func (b *blocker) Methods() object.Methods {
	return object.Methods{
		"Block": object.Func(func(ctx context.Context, d time.Duration) error {
			return b.st.BlockConcurrencyWhile(ctx, func(ctx context.Context) error { return b.st.Sleep(ctx, d) })
		}),
		"Ping": object.Func(func(ctx context.Context) (string, error) { return "pong", nil }),
		"Pass": object.Func(func(ctx context.Context) error {
			return &stub.Error{Msg: "downstream was reset", DurableObjectReset: true}
		}),
	}
}

// L6: blockConcurrencyWhile is cancelled after 30 s. The platform (real
// workerd 1.20261117.1, issue 34 row 2): "A call to blockConcurrencyWhile()
// in a Durable Object waited for too long. The call was canceled and the
// Durable Object was reset.", flagged overloaded and durableObjectReset,
// at 30 s; the same stub then fails with it; a new one reaches a fresh
// instance. A function that returns in time is not touched.
func TestL6_BlockConcurrencyWhileIsCancelledAfter30Seconds(t *testing.T) {
	rt := runtime.New()
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("BLOCKER", func(st *object.State) object.Object { return &blocker{st: st} })
	var blocked, again, quick error
	var failedAt time.Duration
	var fresh any
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("b")
		if err != nil {
			return err
		}
		_, blocked = s.Call(ctx, "Block", 35*time.Second)
		failedAt = rt.Elapsed()
		_, again = s.Call(ctx, "Ping")
		s2, err := ns.GetByName("b")
		if err != nil {
			return err
		}
		fresh, _ = s2.Call(ctx, "Ping")
		_, quick = s2.Call(ctx, "Block", 29*time.Second)
		return nil
	}))
	var e *stub.Error
	require.ErrorAs(t, blocked, &e)
	assert.True(t, e.DurableObjectReset)
	assert.True(t, e.Overloaded)
	assert.False(t, e.Retryable)
	assert.Contains(t, e.Msg, "A call to blockConcurrencyWhile() in a Durable Object waited for too long. The call was canceled and the Durable Object was reset.")
	assert.Equal(t, 30*time.Second, failedAt, "cancelled at 30 s, not when the function would have returned")
	require.ErrorAs(t, again, &e)
	assert.True(t, e.Broken, "the same stub fails with it")
	assert.Equal(t, "pong", fresh)
	assert.NoError(t, quick, "29 s is in time")
}

// S4: an object's error flagged durableObjectReset crosses with the flag
// (the platform: a thrown error with durableObjectReset: true arrives
// with it, real workerd 1.20261117.1, issue 34 row 7), as the object's
// own (Remote), and the stub stays usable (rule L2).
func TestS4_AnObjectsResetFlagCrossesAndTheStubStaysUsable(t *testing.T) {
	rt := runtime.New()
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("BLOCKER", func(st *object.State) object.Object { return &blocker{st: st} })
	var passed error
	var after any
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("b")
		if err != nil {
			return err
		}
		_, passed = s.Call(ctx, "Pass")
		after, err = s.Call(ctx, "Ping")
		return err
	}))
	var e *stub.Error
	require.True(t, errors.As(passed, &e))
	assert.True(t, e.Remote)
	assert.True(t, e.DurableObjectReset)
	assert.Equal(t, "pong", after)
}
