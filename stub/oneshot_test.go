package stub_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S11: a value that goes by reference is marked at its call, in the
// record, whether or not a fault ever shows that the call is one-shot:
// what it is and where. A plain call is not marked.
func TestS11_OneShotValuesAreMarkedAtTheCall(t *testing.T) {
	w := newWorld(t, 3)
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		for _, args := range [][]any{{7}, {s}, {map[string]any{"in": strings.NewReader("x")}}, {&session{user: "u"}}} {
			if _, err := s.Call(ctx, "Take", args...); err != nil {
				return err
			}
		}
		_, err := s.Call(ctx, "Session", "u")
		return err
	}))
	var got []string
	for _, c := range w.rt.Calls() {
		got = append(got, c.OneShot)
	}
	assert.Equal(t, []string{
		"",
		"argument 1: value is a stub (*stub.Stub)",
		"argument 1: value[in] is a reader (*strings.Reader)",
		"argument 1: value is an RPC target (*stub_test.session)",
		"result: value is a stub (*stub.Stub)",
	}, got)
}

// selfish is an object error that unwraps to itself, or whose Unwrap
// panics.
type selfish struct{ panics bool }

func (e *selfish) Error() string { return "selfish" }
func (e *selfish) Unwrap() error {
	if e.panics {
		panic("unwrap")
	}
	return e
}

// erring returns selfish errors.
type erring struct{}

func (erring) Methods() object.Methods {
	return object.Methods{
		"Loop":  object.Func(func(ctx context.Context) error { return &selfish{} }),
		"Panic": object.Func(func(ctx context.Context) error { return &selfish{panics: true} }),
	}
}

// O5, H1: the caller learns whether an object's error was about a value
// that is not plain data by walking the error's chain; an error that
// unwraps to itself, or whose Unwrap panics, still comes back, as itself.
func TestO5_AnObjectErrorThatUnwrapsToItselfComesBack(t *testing.T) {
	rt := runtime.New(runtime.WithSeed(1))
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	ns := rt.Namespace("E", func(st *object.State) object.Object { return erring{} })
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("e")
		if err != nil {
			return err
		}
		for _, m := range []string{"Loop", "Panic"} {
			_, err := s.Call(ctx, m)
			assert.ErrorIs(t, err, stub.ErrRemote, m)
			assert.NotErrorIs(t, err, object.ErrNotPlainData, m)
			assert.ErrorContains(t, err, "object error: selfish", m)
		}
		return nil
	}))
}
