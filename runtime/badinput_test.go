package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badSig has a method whose signature is wrong.
type badSig struct{}

func (badSig) Methods() object.Methods {
	return object.Methods{
		"Fine":   object.Func(func(ctx context.Context) error { return nil }),
		"NoCtx":  object.Func(func(n int) error { return nil }),
		"NoErr":  object.Func(func(ctx context.Context) int { return 0 }),
		"NotFun": object.Func(42),
	}
}

func TestBadInput(t *testing.T) {
	t.Run("nil constructor", func(t *testing.T) {
		rt := newRuntime(t)
		ns := rt.Namespace("X", nil)
		_, err := ns.GetByName("a")
		require.ErrorIs(t, err, runtime.ErrNamespace)
		assert.EqualError(t, err, `runtime.Namespace("X"): namespace constructor is nil`)
		assert.EqualError(t, rt.Run(func(ctx context.Context) error { return nil }), err.Error(), "Run reports it too")
	})
	t.Run("duplicate namespace", func(t *testing.T) {
		rt := newRuntime(t)
		first := rt.Namespace("X", examples.NewInventory)
		second := rt.Namespace("X", examples.NewInventory)
		require.NoError(t, first.Err())
		_, err := second.GetByName("a")
		require.ErrorIs(t, err, runtime.ErrNamespace)
		assert.Contains(t, err.Error(), `runtime.Namespace("X"): namespace already defined`)
		_, err = first.GetByName("a")
		assert.NoError(t, err, "the first definition still works")
	})
	t.Run("empty namespace name", func(t *testing.T) {
		rt := newRuntime(t)
		assert.ErrorContains(t, rt.Namespace("", examples.NewInventory).Err(), "name must not be empty")
	})
	t.Run("bad method signature", func(t *testing.T) {
		rt := newRuntime(t)
		ns := rt.Namespace("B", func(*object.State) object.Object { return badSig{} })
		s := mustStub(t, ns, "b")
		run(t, rt, func(ctx context.Context) error {
			_, err := s.Call(ctx, "Fine")
			require.ErrorIs(t, err, runtime.ErrBadSignature)
			require.ErrorIs(t, err, runtime.ErrSetup)
			var e *stub.Error
			require.ErrorAs(t, err, &e)
			assert.False(t, e.Remote || e.Retryable, "a setup error is neither remote nor retryable")
			assert.Contains(t, err.Error(), `method "NoCtx"`, "names the first bad method in name order")
			assert.Contains(t, err.Error(), "func(int) error does not take a context.Context first")
			return nil
		})
		assert.Equal(t, transport.OutcomeNotRetryable, rt.Calls()[0].Outcome)
	})
	t.Run("unknown method", func(t *testing.T) {
		rt := newRuntime(t)
		ns := rt.Namespace("INVENTORY", examples.NewInventory)
		s := mustStub(t, ns, "a")
		run(t, rt, func(ctx context.Context) error {
			_, err := s.Call(ctx, "Steal", "apple")
			require.ErrorIs(t, err, object.ErrNoMethod)
			assert.Contains(t, err.Error(), `The RPC receiver does not implement the method "Steal". (INVENTORY has methods AddOne, Get, SetQuantity)`)
			return nil
		})
	})
	t.Run("wrong argument count and type", func(t *testing.T) {
		rt := newRuntime(t)
		ns := rt.Namespace("INVENTORY", examples.NewInventory)
		s := mustStub(t, ns, "a")
		run(t, rt, func(ctx context.Context) error {
			_, err := s.Call(ctx, "SetQuantity", "apple")
			require.ErrorIs(t, err, runtime.ErrArguments)
			assert.Contains(t, err.Error(), `method "SetQuantity": bad arguments: got 1 arguments, want 2`)

			_, err = s.Call(ctx, "SetQuantity", "apple", "three")
			require.ErrorIs(t, err, runtime.ErrArguments)
			assert.Contains(t, err.Error(), `argument 2: cannot use "three" (a string): want an integer`)

			_, err = s.Call(ctx, "SetQuantity", "apple", 2.5)
			require.ErrorIs(t, err, runtime.ErrArguments)
			assert.Contains(t, err.Error(), "without losing its value")

			_, err = s.Call(ctx, "SetQuantity", "apple", 3.0) // a whole float, as JSON decodes numbers
			assert.NoError(t, err)
			return nil
		})
	})
	t.Run("constructor returns nil or panics", func(t *testing.T) {
		rt := newRuntime(t)
		nilNS := rt.Namespace("NIL", func(*object.State) object.Object { return nil })
		panicNS := rt.Namespace("PANIC", func(*object.State) object.Object { panic("no config") })
		s1, s2 := mustStub(t, nilNS, "a"), mustStub(t, panicNS, "a")
		run(t, rt, func(ctx context.Context) error {
			_, err := s1.Call(ctx, "X")
			assert.ErrorContains(t, err, `constructor of namespace "NIL" returned nil for a`)
			_, err = s2.Call(ctx, "X")
			assert.ErrorContains(t, err, "constructor of PANIC/a panicked: no config")
			return nil
		})
	})
	t.Run("run on a closed runtime", func(t *testing.T) {
		rt := runtime.New()
		require.NoError(t, rt.Close())
		err := rt.Run(func(ctx context.Context) error { return nil })
		require.ErrorIs(t, err, runtime.ErrClosed)
		assert.EqualError(t, err, "runtime.Run: dosim: runtime closed")
		assert.ErrorIs(t, rt.Advance(1), runtime.ErrClosed)
		assert.NoError(t, rt.Close(), "Close is safe to call twice")
	})
	t.Run("nil run function", func(t *testing.T) {
		rt := newRuntime(t)
		assert.EqualError(t, rt.Run(nil), "runtime.Run: fn is nil")
	})
	t.Run("call outside a task", func(t *testing.T) {
		rt := newRuntime(t)
		s := mustStub(t, rt.Namespace("INVENTORY", examples.NewInventory), "a")
		_, err := s.Call(context.Background(), "Get", "apple")
		assert.ErrorIs(t, err, runtime.ErrNotInTask)
		assert.ErrorIs(t, rt.Sleep(context.Background(), 1), runtime.ErrNotInTask)
	})
	t.Run("stub for an id of another namespace", func(t *testing.T) {
		rt := newRuntime(t)
		a := rt.Namespace("A", examples.NewInventory)
		b := rt.Namespace("B", examples.NewInventory)
		_, err := a.Get(b.IDFromName("x"))
		require.ErrorIs(t, err, runtime.ErrID)
		assert.Contains(t, err.Error(), `belongs to namespace "B"`)
		_, err = a.Get(object.ID{})
		assert.ErrorContains(t, err, "the zero ID")
	})
	t.Run("invalid fault plan", func(t *testing.T) {
		rt := newRuntime(t, runtime.WithFaults(transport.Plan(transport.Rule{Attempt: -1})))
		err := rt.Run(func(ctx context.Context) error { return nil })
		require.ErrorIs(t, err, transport.ErrInvalid)
		assert.Contains(t, err.Error(), "rule 1: Attempt is -1, must be >= 0")
	})
	t.Run("root panics", func(t *testing.T) {
		rt := newRuntime(t)
		err := rt.Run(func(ctx context.Context) error { panic("root boom") })
		var p *runtime.PanicError
		require.True(t, errors.As(err, &p))
		assert.Equal(t, "root boom", p.Value)
	})
}
