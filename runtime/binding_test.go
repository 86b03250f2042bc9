package runtime_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binder asks for its binding by name and answers the namespace's name.
type binder struct{ st *object.State }

func (b *binder) Methods() object.Methods {
	return object.Methods{"Bind": object.Func(func(ctx context.Context, name string) (string, error) {
		ns, err := runtime.Binding(b.st, name)
		if err != nil {
			return "", err
		}
		return ns.Name(), nil
	})}
}

// Issue 36: runtime.Binding gives an object the runtime's namespace of
// that name (a Worker's env.NAME), and refuses an unknown one naming the
// namespaces there are, and a nil state.
func TestBindingIsTheRuntimesNamespace(t *testing.T) {
	rt := newRuntime(t)
	ns := rt.Namespace("A", func(st *object.State) object.Object { return &binder{st: st} })
	rt.Namespace("BILLING", func(st *object.State) object.Object { return &binder{st: st} })
	s := mustStub(t, ns, "a")
	run(t, rt, func(ctx context.Context) error {
		v, err := s.Call(ctx, "Bind", "BILLING")
		require.NoError(t, err)
		assert.Equal(t, "BILLING", v)
		_, err = s.Call(ctx, "Bind", "NOPE")
		assert.ErrorContains(t, err, `Binding("NOPE"): the runtime has no namespace "NOPE"; it has A, BILLING`)
		return nil
	})
	_, err := runtime.Binding(nil, "A")
	assert.ErrorIs(t, err, runtime.ErrNamespace)
}
