package runtime_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
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

// forwarder passes Ping on to its binding B's Pong.
type forwarder struct{ st *object.State }

func (f *forwarder) Methods() object.Methods {
	return object.Methods{
		"Ping": object.Func(func(ctx context.Context) (string, error) {
			ns, err := runtime.Binding(f.st, "B")
			if err != nil {
				return "", err
			}
			s, err := ns.GetByName("b")
			if err != nil {
				return "", err
			}
			return stub.CallAs[string](ctx, s, "Pong")
		}),
		"Pong": object.Func(func(ctx context.Context) (string, error) { return "pong", nil }),
	}
}

// Issue 36: a call an object made says so in its record (By), and a call
// the driver made says nothing.
func TestACallRecordSaysWhichObjectMadeIt(t *testing.T) {
	rt := newRuntime(t)
	ctor := func(st *object.State) object.Object { return &forwarder{st: st} }
	a := rt.Namespace("A", ctor)
	rt.Namespace("B", ctor)
	run(t, rt, func(ctx context.Context) error {
		v, err := mustStub(t, a, "a").Call(ctx, "Ping")
		assert.Equal(t, "pong", v)
		return err
	})
	calls := rt.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, "", calls[0].By, "the driver's call")
	assert.Equal(t, "Pong", calls[1].Method)
	assert.Equal(t, "A/a", calls[1].By, "the call A/a made")
}

// Issue 36: WithBinding makes a binding name a namespace of another name,
// as a Worker's env.BILLING may name a namespace called otherwise; the
// namespace says its bindings, and an unknown target is named in the error.
func TestWithBindingNamesAnotherNamespace(t *testing.T) {
	rt := newRuntime(t)
	ns := rt.Namespace("A", func(st *object.State) object.Object { return &binder{st: st} },
		runtime.WithBinding("BILLING", "PAYMENTS"), runtime.WithBinding("GONE", "NOWHERE"))
	rt.Namespace("PAYMENTS", func(st *object.State) object.Object { return &binder{st: st} })
	assert.Equal(t, map[string]string{"BILLING": "PAYMENTS", "GONE": "NOWHERE"}, ns.Bindings())
	s := mustStub(t, ns, "a")
	run(t, rt, func(ctx context.Context) error {
		v, err := s.Call(ctx, "Bind", "BILLING")
		require.NoError(t, err)
		assert.Equal(t, "PAYMENTS", v)
		_, err = s.Call(ctx, "Bind", "GONE")
		assert.ErrorContains(t, err, `Binding("GONE"): the runtime has no namespace "NOWHERE"`)
		return nil
	})
}
