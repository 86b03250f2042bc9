package dosimtest_test

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestU3U4_FuncFindsAMarkedMethodThatIsNotIdempotent: the planted bug is
// found, shrunk to one fault, and the failure prints the go test command
// that replays it.
func TestU3U4_FuncFindsAMarkedMethodThatIsNotIdempotent(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, explore.Options{Seeds: 300}, counterFunc)
	require.NotNil(t, sum)
	require.False(t, sum.Clean())
	require.Len(t, ft.errors, 1)
	msg := ft.errors[0]
	f := sum.FirstFailing
	require.NotNil(t, f)
	assert.Contains(t, msg, "linearizability COUNTER/c")
	assert.Equal(t, explore.ShrinkDone, f.Shrink)
	assert.Len(t, f.Shrunk, 1, "one lost reply of a retried Add is enough")
	assert.Contains(t, msg, fmt.Sprintf("replay: go test github.com/dosim/dosim/dosimtest -run '^TestU3U4_FuncFindsAMarkedMethodThatIsNotIdempotent$' -count=1 -dosim.seed=%d\n", f.Seed))
	assert.Contains(t, msg, "artifacts in ")
	assert.NotContains(t, msg, "timeline of", "a sweep does not print timelines")

	// U4: the printed seed alone replays the failure, with its timeline.
	t.Setenv("DOSIM_SEED", fmt.Sprint(f.Seed))
	ft = &fakeT{TB: t}
	again := dosimtest.Func(ft, explore.Options{Seeds: 300}, counterFunc)
	require.Len(t, ft.errors, 1)
	assert.Equal(t, 1, again.Ran)
	assert.Equal(t, f.Seed, again.FirstFailing.Seed)
	assert.Contains(t, ft.errors[0], "timeline of the shrunk replay (seed "+fmt.Sprint(f.Seed)+" with 1 fault only):")
	assert.Contains(t, ft.errors[0], "Add(1)", "the timeline shows calls with their arguments")
}

// U4: the flag the replay command prints is this binary's own (the
// helpers define it; nothing looks it up by name), and it wins over
// DOSIM_SEED: Func runs that seed alone.
func TestU4_TheSeedFlagReplaysOneSeed(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	t.Setenv("DOSIM_SEED", "9")
	require.NoError(t, flag.Set("dosim.seed", "16"))
	t.Cleanup(func() { _ = flag.Set("dosim.seed", "") })
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, explore.Options{Seeds: 300}, counterFunc)
	require.NotNil(t, sum)
	assert.Equal(t, 1, sum.Ran)
	assert.Equal(t, uint64(16), sum.First)

	require.NoError(t, flag.Set("dosim.seed", "sixteen"))
	ft = &fakeT{TB: t}
	assert.Nil(t, dosimtest.Func(ft, explore.Options{Seeds: 300}, counterFunc))
	require.Len(t, ft.errors, 1)
	assert.Equal(t, `dosimtest.Func: -dosim.seed="sixteen": want an unsigned integer seed`, ft.errors[0])
}

// Bad options fail the test, before any seed runs, with explore's message.
func TestFuncFailsOnBadOptions(t *testing.T) {
	ft := &fakeT{TB: t}
	assert.Nil(t, dosimtest.Func(ft, explore.Options{}, counterFunc))
	require.Len(t, ft.errors, 1)
	assert.Equal(t, "dosimtest.Func: explore options: Seeds is 0, must be >= 1 (how many seeds to run)", ft.errors[0])
}

// Func explores a Go function's fault space: each seed runs it on a fresh
// runtime with random faults and checks the S rules, linearizability
// against the wallet class itself and the function's own error. In a
// test, pass the test's t: a violation fails it with the seed, the shrunk
// faults, the go test command that replays the seed and a folder of
// artifacts.
func ExampleFunc() {
	t := printT{} // in a test: the *testing.T
	sum := dosimtest.Func(t, explore.Options{Seeds: 200}, func(ctx context.Context, rt *runtime.Runtime) error {
		s, err := rt.Namespace("WALLET", newWallet).GetByName("alice")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Deposit", "tx-1", 50) // errors may be expected under faults
		return nil
	})
	fmt.Println("seeds:", sum.Ran, "clean:", sum.Clean())
	// Output: seeds: 200 clean: true
}
