package explore_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// D1: a function's sweep stopped at its first failure (FailFast) finds the
// same lowest failing seed as the whole sweep, whatever its workers, runs
// fewer seeds, says Stopped (not Complete), and shrinks that seed as the
// whole sweep does.
func TestD1_FailFastStopsAtTheSweepsLowestFailingSeed(t *testing.T) {
	bug := zooBug(t, "two-faults")
	whole, err := explore.RunFunc(explore.Options{Seeds: 200, Workers: 1, Rates: bug.Rates}, bug.Buggy)
	require.NoError(t, err)
	require.NotNil(t, whole.FirstFailing)
	require.True(t, whole.Complete)
	for _, workers := range []int{1, 2} {
		sum, err := explore.RunFuncContext(context.Background(), explore.Options{Seeds: 200, Workers: workers, Rates: bug.Rates, FailFast: true}, bug.Buggy)
		require.NoError(t, err)
		require.NotNil(t, sum.FirstFailing, "workers %d", workers)
		assert.Equal(t, whole.FirstFailing.Seed, sum.FirstFailing.Seed, "workers %d", workers)
		assert.Equal(t, whole.FirstFailing.Shrunk, sum.FirstFailing.Shrunk, "workers %d: shrunk as the whole sweep's", workers)
		assert.True(t, sum.Stopped, "workers %d", workers)
		assert.False(t, sum.Complete, "workers %d", workers)
		assert.Less(t, sum.Ran, 200, "workers %d", workers)
		assert.GreaterOrEqual(t, uint64(sum.Ran), sum.FirstFailing.Seed, "workers %d: every seed up to the failing one ran", workers)
		assert.NoError(t, sum.Validate(), "workers %d", workers)
	}
}

// D1: a sweep whose context is done stops handing out seeds: it ran the
// first seeds only, is neither Complete nor Stopped, and shrinks nothing.
func TestD1_ASweepStopsWhenItsContextIsDone(t *testing.T) {
	bug := zooBug(t, "two-faults")
	ctx, cancel := context.WithCancel(context.Background())
	o := explore.Options{Seeds: 200, Workers: 1, Rates: bug.Rates}
	o.Progress = func(p explore.Progress) {
		if p.Done == 5 {
			cancel()
		}
	}
	sum, err := explore.RunFuncContext(ctx, o, bug.Buggy)
	require.NoError(t, err)
	assert.Equal(t, 5, sum.Ran)
	assert.False(t, sum.Complete)
	assert.False(t, sum.Stopped)
	assert.Nil(t, sum.FirstFailing)
}

// zooBug is the zoo's bug named name.
func zooBug(t *testing.T, name string) zoo.Bug {
	t.Helper()
	for _, b := range zoo.Bugs() {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("no zoo bug %q", name)
	return zoo.Bug{}
}

// D1: a scenario's sweep stopped at its first failure finds the whole
// sweep's lowest failing seed too.
func TestD1_AScenarioSweepStoppedAtItsFirstFailure(t *testing.T) {
	sc := load(t, "booth-leaky")
	e, err := explore.New(sc, explore.Options{Seeds: 100, Workers: 2, NoShrink: true})
	require.NoError(t, err)
	whole, err := e.Sweep()
	require.NoError(t, err)
	require.NotNil(t, whole.FirstFailing)
	e, err = explore.New(sc, explore.Options{Seeds: 100, Workers: 2, NoShrink: true, FailFast: true})
	require.NoError(t, err)
	sum, err := e.SweepContext(context.Background())
	require.NoError(t, err)
	require.NotNil(t, sum.FirstFailing)
	assert.Equal(t, whole.FirstFailing.Seed, sum.FirstFailing.Seed)
	assert.Equal(t, whole.FirstFailing.Violations, sum.FirstFailing.Violations)
	assert.True(t, sum.Stopped)
	assert.Less(t, sum.Ran, whole.Ran)
}
