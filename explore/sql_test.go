package explore_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type sqlCounter struct{ st *object.State }

func (c *sqlCounter) Methods() object.Methods {
	return object.Methods{"Bump": object.Retryable(c.Bump)}
}

// Bump is marked Retryable but runs a non-idempotent UPDATE.
func (c *sqlCounter) Bump(ctx context.Context) (int, error) {
	db := c.st.SQL()
	if _, err := db.Exec(ctx, "CREATE TABLE IF NOT EXISTS c (n INTEGER); INSERT INTO c SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM c)"); err != nil {
		return 0, err
	}
	cur, err := db.Exec(ctx, "UPDATE c SET n = n + 1; SELECT n FROM c")
	if err != nil {
		return 0, err
	}
	var n int
	return n, cur.One(&n)
}

// TestQ2_FuncCatchesARetriedSQLUpdate: the explorer's model replays calls
// over SQL state too, so a lost reply whose retry runs the UPDATE again is
// a linearizability violation.
func TestQ2_FuncCatchesARetriedSQLUpdate(t *testing.T) {
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, explore.Options{Seeds: 200}, func(ctx context.Context, rt *runtime.Runtime) error {
		s, err := rt.Namespace("C", func(st *object.State) object.Object { return &sqlCounter{st} }).GetByName("c")
		if err != nil {
			return err
		}
		for range 3 {
			_, _ = s.Call(ctx, "Bump")
		}
		return nil
	})
	require.NotNil(t, sum)
	require.False(t, sum.Clean(), "ran %d, histories %d, unchecked %+v", sum.Ran, sum.Histories, sum)
	assert.Contains(t, ft.errors[0], "linearizability C/c")
}

// TestQ2_SeatMapLeakyIsCaught: the seat map explores clean; bound to
// seats-leaky (a marked Book that inserts without its booking id), the
// retry of a booking whose reply was lost fails on UNIQUE, and the
// explorer reports that no order of the calls explains it.
func TestQ2_SeatMapLeakyIsCaught(t *testing.T) {
	sc := load(t, "seat-map")
	sum, err := explore.Run(sc, explore.Options{Seeds: 300})
	require.NoError(t, err)
	assert.True(t, sum.Clean(), "%v", sum.Violations)
	assert.Equal(t, 300, sum.Histories, "the default, mix: every seed reaches the object and is checked")

	sum, err = explore.Run(sc, explore.Options{Seeds: 300, Classes: map[string]runtime.Constructor{"SHOW": examples.NewSeatsLeaky}})
	require.NoError(t, err)
	require.False(t, sum.Clean())
	assert.Equal(t, explore.KindLinearizability, sum.Violations[0].Kind)
}
