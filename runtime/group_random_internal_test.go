package runtime

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Issue 14: three Groups whose tasks start tasks in any of them, at random
// points: before, while and after a Group's pending count reaches zero
// (its numbering base moves on), with sleeps between. Every function runs
// exactly once, and every Wait returns once its Group's tasks are done.
func TestGroupsStartingTasksInEachOtherRunEachOnce(t *testing.T) {
	for seed := range uint64(8) {
		rt := New(WithSeed(seed))
		rng := rand.New(rand.NewPCG(seed, 99))
		ran := map[int]int{}
		started := 0
		err := rt.Run(func(ctx context.Context) error {
			gs := []*Group{rt.Group(ctx), rt.Group(ctx), rt.Group(ctx)}
			var start func(g *Group, depth int)
			start = func(g *Group, depth int) {
				id := started
				started++
				sleep := time.Duration(rng.IntN(3)) * time.Millisecond
				var children []int
				if depth < 4 {
					for range rng.IntN(3) {
						children = append(children, rng.IntN(len(gs)))
					}
				}
				g.Go(func(ctx context.Context) error {
					ran[id]++
					for i, c := range children {
						if i == 1 {
							if err := rt.Sleep(ctx, sleep); err != nil {
								return err
							}
						}
						start(gs[c], depth+1)
					}
					return rt.Sleep(ctx, sleep)
				})
			}
			for round := range 5 {
				for range 1 + rng.IntN(6) {
					start(gs[rng.IntN(len(gs))], 0)
				}
				w := gs[round%len(gs)]
				if err := w.Wait(); err != nil {
					return err
				}
				if w.pending != 0 {
					t.Errorf("seed %d: Wait returned with %d pending", seed, w.pending)
				}
			}
			for _, g := range gs {
				if err := g.Wait(); err != nil {
					return err
				}
			}
			return nil
		})
		require.NoError(t, err, "seed %d", seed)
		require.Len(t, ran, started, "seed %d", seed)
		for id, n := range ran {
			require.Equal(t, 1, n, "seed %d: function %d", seed, id)
		}
		require.NoError(t, rt.Close())
	}
}
