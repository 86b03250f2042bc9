package runtime_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
)

// cyclic is a map that holds itself.
func cyclic() map[string]any {
	m := map[string]any{"n": 1}
	m["self"] = m
	return m
}

// crossing has a method for every place where a value enters the
// simulation, each given a value that is not plain data.
type crossing struct {
	agent.Agent
	st *object.State
}

func (c *crossing) Methods() object.Methods {
	store := c.st.Storage()
	return object.Methods{
		"Take": object.Func(func(ctx context.Context, v any) error { return nil }),
		"Put":  object.Func(func(ctx context.Context) error { return store.Put(ctx, "k", cyclic()) }),
		"PutMany": object.Func(func(ctx context.Context) error {
			return store.PutMany(ctx, map[string]any{"a": 1, "k": cyclic()})
		}),
		"Transaction": object.Func(func(ctx context.Context) error {
			return store.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error { return tx.Put(ctx, "k", cyclic()) })
		}),
		"Effect": object.Func(func(ctx context.Context) error { return c.st.Effect(ctx, "loop", cyclic()) }),
		"Schedule": object.Func(func(ctx context.Context) error {
			_, err := c.Schedule(ctx, agent.After(time.Minute), "Take", cyclic())
			return err
		}),
		"Queue": object.Func(func(ctx context.Context) error {
			_, err := c.Queue(ctx, "Take", []any{1, cyclic()})
			return err
		}),
		"Cycle":  object.Func(func(ctx context.Context) (any, error) { return cyclic(), nil }),
		"Stdout": object.Func(func(ctx context.Context) (*os.File, error) { return os.Stdout, nil }),
		"Chan":   object.Func(func(ctx context.Context) (chan int, error) { return make(chan int), nil }),
		"Func":   object.Func(func(ctx context.Context) (func(), error) { return func() {}, nil }),
		"Nested": object.Func(func(ctx context.Context) (any, error) {
			return map[string]any{"out": struct{ W *os.File }{os.Stderr}}, nil
		}),
	}
}

// O5: a value that holds itself cannot be copied, wherever it enters the
// simulation: storage, a call's argument or result, an effect's payload,
// a schedule's or a queue item's. The error says where the cycle is, and
// nothing is stored.
func TestO5_CyclesAreRefusedWhereValuesEnter(t *testing.T) {
	rt := newRuntime(t)
	ns := rt.Namespace("X", func(st *object.State) object.Object { return &crossing{st: st} })
	s := mustStub(t, ns, "x")
	for _, tc := range []struct{ method, path string }{
		{"Put", "value[self] is value again"},
		{"PutMany", "value[self] is value again"},
		{"Transaction", "value[self] is value again"},
		{"Effect", "value[self] is value again"},
		{"Schedule", "payload: value[self] is value again"},
		{"Queue", "payload: value[1][self] is value[1] again"},
		{"Cycle", "value[self] is value again"},
	} {
		run(t, rt, func(ctx context.Context) error {
			_, err := s.Call(ctx, tc.method)
			if !assert.Error(t, err, tc.method) {
				return nil
			}
			assert.ErrorIs(t, err, object.ErrNotPlainData, tc.method)
			assert.ErrorContains(t, err, tc.path, tc.method)
			assert.ErrorContains(t, err, "contains itself", tc.method)
			return nil
		})
	}
	run(t, rt, func(ctx context.Context) error {
		_, err := s.Call(ctx, "Take", cyclic())
		assert.ErrorIs(t, err, object.ErrNotPlainData)
		assert.ErrorContains(t, err, "argument 1: value[self] is value again")
		return nil
	})
	for k := range ns.Storage(ns.IDFromName("x")).Snapshot() {
		assert.NotEqual(t, "k", k, "nothing cyclic was stored")
		assert.False(t, strings.HasPrefix(k, object.ReservedPrefix+"schedule/") || strings.HasPrefix(k, object.ReservedPrefix+"queue/"), "no task was stored: %s", k)
	}
	assert.Empty(t, rt.Effects())
	for _, c := range rt.Calls() {
		assert.Nil(t, c.Result, "%s: no cyclic result is recorded", c.Method)
	}
}

// O5: a stub is not data, nor an RPC target that holds what is not: storage
// refuses one and says what it is, not what inside it stopped the copy.
func TestO5_StubsAndTargetsAreNotStored(t *testing.T) {
	rt := newRuntime(t)
	ns := rt.Namespace("X", func(st *object.State) object.Object { return &crossing{st: st} })
	s := mustStub(t, ns, "x")
	store := ns.Storage(ns.IDFromName("y"))
	run(t, rt, func(ctx context.Context) error {
		for _, v := range []any{s, map[string]any{"s": s}} {
			err := store.Put(ctx, "k", v)
			assert.ErrorIs(t, err, object.ErrNotPlainData)
			assert.ErrorContains(t, err, "holds a stub (*stub.Stub)")
		}
		err := store.Put(ctx, "k", []any{&target{done: func() {}}})
		assert.ErrorContains(t, err, "value[0] holds an RPC target (*runtime_test.target)")
		return nil
	})
	assert.Zero(t, store.Len())
}

// target is an RPC target.
type target struct {
	object.RpcTarget
	done func()
}

func (t *target) Methods() object.Methods { return nil }

// O5: a result that is not plain data (an operating-system file, a
// channel, a func, or any of them inside) is refused with its path: the
// caller never gets the object's own pointer.
func TestO5_ResultsThatAreNotPlainDataAreRefused(t *testing.T) {
	rt := newRuntime(t)
	ns := rt.Namespace("X", func(st *object.State) object.Object { return &crossing{st: st} })
	s := mustStub(t, ns, "x")
	for _, tc := range []struct{ method, want string }{
		{"Stdout", "value is an operating-system handle (*os.File)"},
		{"Chan", "value holds a channel (no platform counterpart: send a stream as an io.Reader)"},
		{"Nested", "value[out].W is an operating-system handle (*os.File)"},
	} {
		run(t, rt, func(ctx context.Context) error {
			v, err := s.Call(ctx, tc.method)
			assert.Nil(t, v, tc.method)
			var e *stub.Error
			if !assert.True(t, errors.As(err, &e), "%s: %v", tc.method, err) {
				return nil
			}
			assert.True(t, e.Remote, "%s: the object's result is the object's fault", tc.method)
			assert.ErrorIs(t, err, object.ErrNotPlainData, tc.method)
			assert.ErrorContains(t, err, "result of X/x."+tc.method+": "+tc.want)
			return nil
		})
	}
	for _, c := range rt.Calls() {
		assert.Equal(t, transport.OutcomeNotRetryable, c.Outcome, c.Method)
	}
}
