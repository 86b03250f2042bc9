package runtime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pctTrace runs four callers on two objects under s and returns the trace
// and the steps.
func pctTrace(t *testing.T, seed uint64, s runtime.Schedule) (string, uint64) {
	t.Helper()
	rt := runtime.New(runtime.WithSeed(seed), runtime.WithSchedule(s))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		for i := range 4 {
			g.Go(func(ctx context.Context) error {
				st, err := ns.GetByName(fmt.Sprint("shop-", i%2))
				if err != nil {
					return err
				}
				_, _ = st.Call(ctx, "SetQuantity", "apple", i)
				_, err = st.Call(ctx, "AddOne", "apple")
				return err
			})
		}
		return g.Wait()
	}))
	return rt.Trace(), rt.Steps()
}

// D1 under PCT: the same seed and schedule give the same trace; another
// depth is another schedule.
func TestWithSchedulePCTSameSeedSameTraceD1(t *testing.T) {
	pct := runtime.Schedule{Strategy: runtime.StrategyPCT, Depth: 3, Steps: 20}
	traces := map[string]bool{}
	for seed := range uint64(10) {
		a, steps := pctTrace(t, seed, pct)
		b, _ := pctTrace(t, seed, pct)
		assert.Equal(t, a, b, "seed %d", seed)
		assert.Positive(t, steps)
		traces[a] = true
	}
	assert.Greater(t, len(traces), 1, "seeds draw other priorities")
}

// A Schedule out of range makes Run fail, naming the field and what is
// allowed.
func TestWithScheduleBadInput(t *testing.T) {
	for _, bad := range []struct {
		s    runtime.Schedule
		want string
	}{
		{runtime.Schedule{Strategy: "chess"}, `strategy is "chess", must be random or pct`},
		{runtime.Schedule{Strategy: runtime.StrategyPCT, Depth: 11}, "depth is 11, must be from 1 to 10"},
		{runtime.Schedule{Depth: 2}, "depth is 2 with the random strategy"},
	} {
		rt := runtime.New(runtime.WithSchedule(bad.s))
		err := rt.Run(func(context.Context) error { return nil })
		require.ErrorIs(t, err, runtime.ErrSchedule)
		assert.Contains(t, err.Error(), bad.want)
		require.NoError(t, rt.Close())
	}
}
