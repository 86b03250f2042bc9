package explore_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stamper stores the wall clock: the planted nondeterminism. With wall
// false it stores the virtual clock, as it should.
type stamper struct {
	st   *object.State
	wall bool
}

func (s *stamper) Methods() object.Methods {
	return object.Methods{"Stamp": object.Func(func(ctx context.Context) (string, error) {
		now := s.st.Now()
		if s.wall {
			now = time.Now() //dosim: the planted bug this test finds
		}
		v := now.Format(time.RFC3339Nano)
		return v, s.st.Storage().Put(ctx, "at", v)
	})}
}

func stampFunc(wall bool) func(ctx context.Context, rt *runtime.Runtime) error {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		s, err := rt.Namespace("STAMP", func(st *object.State) object.Object { return &stamper{st: st, wall: wall} }).GetByName("s")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Stamp")
		return nil
	}
}

// D1 and the determinism self-check: a class that stores the wall clock
// makes two runs of one seed differ; CheckDeterminism reports it, naming
// the first line that differs, and a class that stores the virtual clock
// passes. Without the option the sweep does not run seeds twice.
func TestD1_CheckDeterminismFindsTheWallClock(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, explore.Options{Seeds: 64, CheckDeterminism: true, NoShrink: true}, stampFunc(true))
	require.NotNil(t, sum)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "nondeterminism: the seed ran twice and the runs differ at line ")
	assert.Contains(t, ft.errors[0], "time.Now")
	// Its replay by the model reads the wall clock again, so each history
	// fails the linearizability check too; every failing seed runs twice
	// and says why.
	kinds := map[string]int{}
	for _, v := range sum.Violations {
		kinds[v.Kind]++
	}
	assert.Greater(t, kinds[explore.KindNondeterminism], 40, "the seeds whose Stamp ran differ")

	ft = &fakeT{TB: t}
	sum = dosimtest.Func(ft, explore.Options{Seeds: 128, CheckDeterminism: true}, stampFunc(false))
	assert.Empty(t, ft.errors)
	assert.True(t, sum.Clean(), "%v", sum.Violations)
}

// wallInventory is the inventory with a planted wall-clock read: AddOne
// stores when it ran by time.Now.
type wallInventory struct{ st *object.State }

func (w *wallInventory) Methods() object.Methods {
	get := func(ctx context.Context, item string) (int, error) {
		var n int
		_, err := w.st.Storage().Get(ctx, item, &n)
		return n, err
	}
	return object.Methods{
		"SetQuantity": object.Retryable(func(ctx context.Context, item string, n int) error { return w.st.Storage().Put(ctx, item, n) }),
		"AddOne": object.Func(func(ctx context.Context, item string) (int, error) {
			n, err := get(ctx, item)
			if err != nil {
				return 0, err
			}
			if err := w.st.Storage().Put(ctx, "touched", time.Now().UnixNano()); err != nil {
				return 0, err
			}
			return n + 1, w.st.Storage().Put(ctx, item, n+1)
		}),
		"Get": object.Func(get),
	}
}

// D1: the same self-check on a scenario sweep, with a class of the user's
// that reads the wall clock.
func TestD1_CheckDeterminismOnAScenario(t *testing.T) {
	sc := load(t, "ambiguous-delivery")
	wall := map[string]runtime.Constructor{"INVENTORY": func(st *object.State) object.Object { return &wallInventory{st: st} }}
	sum, err := explore.Run(sc, explore.Options{Seeds: 10, Rates: noFaults, Classes: wall, CheckDeterminism: true, NoShrink: true})
	require.NoError(t, err)
	require.NotEmpty(t, sum.Violations)
	found := false
	for _, v := range sum.Violations {
		found = found || (v.Kind == explore.KindNondeterminism && v.Seed == 1)
	}
	assert.True(t, found, "%v", sum.Violations)

	sum, err = explore.Run(sc, explore.Options{Seeds: 200, CheckDeterminism: true})
	require.NoError(t, err)
	assert.True(t, sum.Clean(), "the built-in class is deterministic: %v", sum.Violations)
}
