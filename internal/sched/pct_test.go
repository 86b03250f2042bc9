package sched

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rounds starts n tasks that each wake at every second for rounds
// seconds, and returns the order they ran in at each instant, one
// instant a line. With depth > 0 the kernel schedules by PCT.
func rounds(t *testing.T, seed uint64, depth int, steps uint64, n, rounds int) []string {
	t.Helper()
	k := newKernel(seed)
	defer k.Close()
	if depth > 0 {
		require.NoError(t, k.SetPCT(depth, steps))
	}
	at := make([][]string, rounds)
	run(t, k, func(ctx context.Context) {
		for i := range n {
			k.Go(ctx, fmt.Sprint("t", i), func(ctx context.Context) {
				for r := range rounds {
					require.NoError(t, FromContext(ctx).Sleep(ctx, time.Second))
					at[r] = append(at[r], fmt.Sprint(i))
				}
			})
		}
	})
	out := make([]string, rounds)
	for r, o := range at {
		out[r] = strings.Join(o, ",")
	}
	return out
}

// D1 under PCT: the same seed gives the same order, change points and all.
func TestPCTIsSeededD1(t *testing.T) {
	first := rounds(t, 7, 3, 40, 4, 8)
	for range 3 {
		assert.Equal(t, first, rounds(t, 7, 3, 40, 4, 8), "same seed, same order under PCT")
	}
	orders := map[string]bool{}
	for seed := range uint64(20) {
		orders[strings.Join(rounds(t, seed, 3, 40, 4, 8), ";")] = true
	}
	assert.Greater(t, len(orders), 10, "different seeds, different schedules")
}

// PCT depth 1: each task keeps the priority it drew when it was created,
// so the tasks ready at one instant run in the same order at every
// instant, where the random tie-break draws a new order at each.
func TestPCTDepthOneKeepsPriorities(t *testing.T) {
	for seed := range uint64(10) {
		order := rounds(t, seed, 1, 1, 5, 6)
		for r := range order {
			assert.Equal(t, order[0], order[r], "seed %d: round %d", seed, r)
		}
	}
	varied := 0
	for seed := range uint64(10) {
		order := rounds(t, seed, 0, 0, 5, 6)
		if order[0] != order[len(order)-1] || order[1] != order[2] {
			varied++
		}
	}
	assert.Positive(t, varied, "the random tie-break draws a new order per instant")
}

// PCT change points: at change point i the task running the step drops to
// priority i, below every initial priority, so from its next wake-up on it
// runs after the others ready with it. Steps: 1 is the root, 2..5 the
// tasks' first runs (to their first sleep), then four a round.
func TestPCTChangePointDropsTheRunningTask(t *testing.T) {
	checked := 0
	for seed := range uint64(10) {
		k := newKernel(seed)
		require.NoError(t, k.SetPCT(2, 12))
		points := k.ChangePoints()
		require.Len(t, points, 1)
		k.Close()
		order := rounds(t, seed, 2, 12, 4, 6)
		if points[0] <= 5 { // a first run: the task sleeps, wakes last from round 1 on
			continue // which task that is depends on the first round's order; checked below
		}
		// Step s > 5 is in round (s-6)/4, the ((s-6)%4)-th to run there.
		r, j := (points[0]-6)/4, (points[0]-6)%4
		dropped := strings.Split(order[r], ",")[j]
		checked++
		for _, later := range order[r+1:] {
			ids := strings.Split(later, ",")
			assert.Equal(t, dropped, ids[len(ids)-1], "seed %d: change point at step %d, round %d: %v", seed, points[0], r, order)
		}
		for _, earlier := range order[:r+1] {
			assert.Equal(t, order[0], earlier, "seed %d: before the change point the order holds", seed)
		}
	}
	assert.Greater(t, checked, 3, "most seeds put the change point past the first runs")
}

// Bad depths and steps are refused, naming what is allowed.
func TestSetPCTBadInput(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	for _, d := range []int{0, -1, MaxDepth + 1} {
		err := k.SetPCT(d, 10)
		require.Error(t, err)
		assert.Contains(t, err.Error(), fmt.Sprintf("depth is %d, must be from 1 to %d", d, MaxDepth))
	}
	err := k.SetPCT(3, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "must be at least 1")
	assert.Nil(t, k.ChangePoints(), "a refused SetPCT leaves the random tie-break")
}

// Steps counts the picks that ran a task: the root, then each task's
// first run and each of its wake-ups.
func TestStepsCountsTaskRuns(t *testing.T) {
	k := newKernel(1)
	defer k.Close()
	run(t, k, func(ctx context.Context) {
		for range 3 {
			k.Go(ctx, "sleeper", func(ctx context.Context) {
				require.NoError(t, FromContext(ctx).Sleep(ctx, time.Second))
			})
		}
	})
	assert.Equal(t, uint64(1+3+3), k.Steps())
}
