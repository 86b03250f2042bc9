package explore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gateway charges through agent.Retry with a circuit breaker: runtime-wide
// state that no replay of one turn can know.
type gateway struct{ st *object.State }

func (g *gateway) Methods() object.Methods {
	return object.Methods{"Charge": object.Func(func(ctx context.Context, cents int) (int, error) {
		err := agent.Retry(ctx, func(ctx context.Context, attempt int) error {
			if attempt == 1 {
				return errors.New("the card network timed out")
			}
			return nil
		}, agent.RetryOptions{Breaker: &agent.BreakerOptions{Name: "cards", Failures: 5, Window: time.Minute, Cooldown: time.Minute}})
		if err != nil {
			return 0, err
		}
		var total int
		if _, err := g.st.Storage().Get(ctx, "total", &total); err != nil {
			return 0, err
		}
		total += cents
		return total, g.st.Storage().Put(ctx, "total", total)
	})}
}

func gatewayFunc(ctx context.Context, rt *runtime.Runtime) error {
	ns := rt.Namespace("GATEWAY", func(st *object.State) object.Object { return &gateway{st: st} })
	for _, c := range []int{100, 250} {
		s, err := ns.GetByName("g")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Charge", c)
	}
	return nil
}

// C3: a sweep that could check too few of its histories (here: each turn
// read a circuit breaker, runtime-wide state no replay can know) is not
// clean, however few violations it found: it says how little it checked
// and why, and passes only when the minimum is lowered.
func TestC3_TooLittleCheckedIsNotClean(t *testing.T) {
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, explore.Options{Seeds: 50}, gatewayFunc)
	require.NotNil(t, sum)
	assert.False(t, sum.Clean())
	assert.Zero(t, sum.Total, "no violation: the histories went unchecked, not wrong")
	assert.Positive(t, sum.Unchecked[explore.ReasonUnreproducible])
	assert.False(t, sum.CheckedEnough())
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "no violation found, but only ")
	assert.Contains(t, ft.errors[0], "below the minimum of 90%")
	assert.Contains(t, ft.errors[0], "not checked: ")
	assert.Contains(t, ft.errors[0], explore.ReasonUnreproducible)

	ft = &fakeT{TB: t}
	sum = dosimtest.Func(ft, explore.Options{Seeds: 50, MinChecked: -1}, gatewayFunc)
	assert.Empty(t, ft.errors, "no minimum: what was checked passed")
	assert.True(t, sum.Clean())
}

// C3: what a sweep checked survives its JSON and a merge of shards: the
// checked and unchecked histories, the faults fired, the rule paths and
// the minimum; a summary that says something impossible about them is
// refused.
func TestC3_SummaryCountsSurviveAMerge(t *testing.T) {
	sc := load(t, "ambiguous-delivery")
	whole, err := explore.Run(sc, explore.Options{Seeds: 100})
	require.NoError(t, err)
	merged := mustMerge(t, shardsViaJSON(t, sc, explore.Options{Seeds: 100}, 2)...)
	assert.Equal(t, whole.Histories, merged.Histories)
	assert.Equal(t, whole.Fired, merged.Fired)
	assert.Equal(t, whole.Paths, merged.Paths)
	assert.Equal(t, whole.MinChecked, merged.MinChecked)
	assert.Positive(t, merged.Paths[explore.PathRecovered])
	assert.Empty(t, merged.NeverFired(), "every fault of the default rates fired in 100 seeds")

	bad := []struct{ edit, want string }{
		{`"paths": {`, `"paths": {"teleported": 1, `},
		{`"fired": {`, `"fired": {"Nope": {"lose-everything": 1}, `},
		{`"minChecked": 0.9`, `"minChecked": 1.5`},
	}
	var b bytes.Buffer
	require.NoError(t, whole.WriteJSON(&b))
	for _, tc := range bad {
		text := strings.Replace(b.String(), tc.edit, tc.want, 1)
		require.NotEqual(t, b.String(), text, tc.edit)
		_, err := explore.ReadSummary(strings.NewReader(text))
		assert.ErrorIs(t, err, explore.ErrMerge, tc.want)
	}
	never := &explore.Summary{Rates: map[string]float64{"reset": 0.1, "lose-request": 0.1}, Fired: map[string]map[string]int{"Get": {"lose-request": 3}}}
	assert.Equal(t, []string{"reset"}, never.NeverFired())
}
