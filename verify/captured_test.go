package verify_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capturer calls a billing object through a namespace its constructor
// captured: the pattern verify cannot rebuild (issue 36).
type capturer struct {
	st      *object.State
	billing *runtime.Namespace
}

func (l *capturer) Methods() object.Methods {
	return object.Methods{"Charge": object.Retryable(l.Charge)}
}

// Charge asks billing for its count.
func (l *capturer) Charge(ctx context.Context) (int, error) {
	s, err := l.billing.GetByName("acct")
	if err != nil {
		return 0, err
	}
	return stub.CallAs[int](ctx, s, "Count")
}

type billCounter struct{ st *object.State }

func (c *billCounter) Methods() object.Methods {
	return object.Methods{"Count": object.Retryable(func(ctx context.Context) (int, error) { return 1, nil })}
}

// Rule C6: verify runs a class in runtimes of its own, where a namespace
// its constructor captured from the test's runtime does not exist; the
// verdict is inconclusive, and the error names the way out
// (runtime.WithBinding, runtime.Binding), not a bare "not inside a
// simulated task".
func TestC6_ACapturedNamespaceIsNamedWithItsFix(t *testing.T) {
	rt := runtime.New()
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	billing := rt.Namespace("BILLING", func(st *object.State) object.Object { return &billCounter{st: st} })
	ns := rt.Namespace("LIMITER", func(st *object.State) object.Object { return &capturer{st: st, billing: billing} })

	rep, err := verify.Idempotent(ns, "Charge", nil, verify.Options{})
	require.NoError(t, err, "what the method does is a verdict")
	assert.Equal(t, verify.VerdictInconclusive, rep.Verdict, rep.Diff)
	assert.Contains(t, rep.Diff, "a call to BILLING/acct from a task of another runtime")
	assert.Contains(t, rep.Diff, "runtime.Binding(st, NAME)")

	// The same call from the namespace's own runtime works.
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("l")
		require.NoError(t, err)
		n, err := stub.CallAs[int](ctx, s, "Charge")
		assert.Equal(t, 1, n)
		return err
	}))
	// And the error is still ErrNotInTask, for code that checks it.
	other := runtime.New()
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	require.NoError(t, other.Run(func(ctx context.Context) error {
		s, err := billing.GetByName("acct")
		require.NoError(t, err)
		_, err = s.Call(ctx, "Count")
		assert.True(t, errors.Is(err, runtime.ErrNotInTask), "%v", err)
		assert.ErrorContains(t, err, "from a task of another runtime")
		return nil
	}))
}
