package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// applier calls back the function its caller passes, and returns one.
type applier struct{ st *object.State }

func (a *applier) Methods() object.Methods {
	return object.Methods{
		"Apply": object.Func(func(ctx context.Context, f func(int) int, x int) (int, error) { return f(x), nil }),
		"Adder": object.Func(func(ctx context.Context, n int) (func(int) int, error) {
			return func(x int) int { return x + n }, nil
		}),
	}
}

// S11, O5: a function crosses a call by reference, as the platform passes
// it as a stub the other side calls back ("stream, stub, function or
// RpcTarget" stop a retry): the object calls the caller's function, a
// returned function is callable by the caller, the call is one-shot (a
// lost request is not retried: OutcomeNotReplayable, one attempt), and
// the call's record names the function. Issue 34, row 12.
func TestS11_AFunctionCrossesByReferenceAndMakesTheCallOneShot(t *testing.T) {
	rt := newRuntime(t, runtime.WithFaults(transport.Plan(transport.Rule{Method: "Apply", Call: 3, Attempt: 1, Fault: transport.LoseRequest})))
	ns := rt.Namespace("A", func(st *object.State) object.Object { return &applier{st: st} })
	s := mustStub(t, ns, "a")
	calledBack := 0
	double := func(x int) int { calledBack++; return 2 * x }
	run(t, rt, func(ctx context.Context) error {
		v, err := s.Call(ctx, "Apply", double, 21)
		require.NoError(t, err)
		assert.Equal(t, 42, v, "the object called the caller's function")
		add, err := s.Call(ctx, "Adder", 5)
		require.NoError(t, err)
		f, ok := add.(func(int) int)
		require.True(t, ok, "a returned function arrives as one: %T", add)
		assert.Equal(t, 7, f(2))
		_, err = s.Call(ctx, "Apply", double, 1) // its request is lost
		assert.Error(t, err)
		return nil
	})
	assert.Equal(t, 1, calledBack, "the lost call's function was never called")
	calls := rt.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, transport.OutcomeNotReplayable, calls[2].Outcome, "not retried")
	assert.Len(t, calls[2].Attempts, 1)
	found := false
	for _, c := range calls {
		if strings.Contains(c.OneShot, "is a function (func(int) int)") {
			found = true
		}
	}
	assert.True(t, found, "the record names the function: %+v", calls)
}
