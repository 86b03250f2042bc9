package dosimtest_test

import (
	"flag"
	"regexp"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/explore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exhaustiveOpts search every placement of one fault: enough for the
// counter's planted bug (one lost reply of a retried Add).
var exhaustiveOpts = explore.Options{Exhaustive: true, MaxFaults: 1, NoLatency: true}

// U4 for an exhaustive search: its failure is a placement of faults, not
// what the seed draws, so the report says what the search placed and
// prints the command that replays the seed with exactly the shrunk
// faults (-dosim.faults), not a seed alone. That command fails again,
// with the timeline of that run; the same seed with no fault is clean.
func TestU4_ExhaustiveFailureReplaysByItsFaults(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, exhaustiveOpts, counterFunc)
	require.NotNil(t, sum)
	require.NotNil(t, sum.Exhaustive)
	require.Len(t, ft.errors, 1)
	msg := ft.errors[0]
	f := sum.FirstFailing
	require.NotNil(t, f)
	require.Len(t, f.Shrunk, 1)
	assert.Contains(t, msg, "TestU4_ExhaustiveFailureReplaysByItsFaults: the exhaustive search (up to 1 fault(s) of ")
	assert.Contains(t, msg, "at every decision point, seed 1) failed: ")
	assert.Contains(t, msg, "faults placed 1, none of which can be dropped (")
	assert.Contains(t, msg, "the shrunk replay (seed 1 with 1 fault only) violates:\n")
	m := regexp.MustCompile(`replay: go test github.com/dosim/dosim/dosimtest -run '\^TestU4_ExhaustiveFailureReplaysByItsFaults\$' -count=1 -dosim.seed=1 -dosim.faults=(\S+)\n`).FindStringSubmatch(msg)
	require.NotNil(t, m, "no replay line with -dosim.faults in:\n%s", msg)
	assert.Equal(t, explore.FaultSetText(f.Shrunk), m[1])
	assert.Regexp(t, `^\d+:\d+:Add=[a-z-]+$`, m[1])
	assert.NotContains(t, msg, "timeline of", "a search does not print timelines")

	// The printed command: that seed, with exactly those faults, once.
	// The flag is this binary's own, as -dosim.seed is.
	t.Setenv("DOSIM_SEED", "1")
	require.NoError(t, flag.Set(dosimtest.FaultsFlag, m[1]))
	ft = &fakeT{TB: t}
	again := dosimtest.Func(ft, exhaustiveOpts, counterFunc)
	require.NoError(t, flag.Set(dosimtest.FaultsFlag, ""))
	require.Len(t, ft.errors, 1)
	assert.Equal(t, 1, again.Ran)
	assert.Nil(t, again.Exhaustive, "one run, not a search")
	assert.Equal(t, f.Shrunk, again.FirstFailing.Shrunk)
	assert.Equal(t, f.Violations, again.FirstFailing.Violations)
	assert.Contains(t, ft.errors[0], "violation(s) in seed 1 with the faults -dosim.faults gave only ("+m[1]+")")
	assert.Contains(t, ft.errors[0], "timeline of the shrunk replay (seed 1 with 1 fault only):")
	assert.Contains(t, ft.errors[0], "-dosim.seed=1 -dosim.faults="+m[1]+"\n")

	// No fault: the same seed is clean, and says so.
	t.Setenv("DOSIM_FAULTS", "none")
	ft = &fakeT{TB: t}
	clean := dosimtest.Func(ft, exhaustiveOpts, counterFunc)
	assert.Empty(t, ft.errors)
	assert.True(t, clean.Clean())
	require.Len(t, ft.logs, 1)
	assert.Contains(t, ft.logs[0], "seed 1 with the faults none only: no violation")
}

// A malformed -dosim.faults, one without a seed to replay, and one that
// strikes nothing in its run (rule C11) fail the test, naming the value
// and what is wanted.
func TestU4_BadFaultsReplay(t *testing.T) {
	for _, tc := range []struct{ seed, faults, want string }{
		{"1", "1:1", `dosimtest.Func: DOSIM_FAULTS="1:1": explore options: fault "1:1": want CALL:ATTEMPT:METHOD=FAULT, such as 2:1:AddOne=lose-response`},
		{"1", "1:1:Add=lose-everything", `unknown fault "lose-everything"; allowed are `},
		// Rule C11: a fault that strikes nothing is refused, not run clean.
		{"1", "99:1:Add=lose-response", "dosimtest.Func: -dosim.faults: a replayed fault struck nothing: 99:1:Add=lose-response (the run made"},
		{"", "1:1:Add=lose-response", "dosimtest.Func: -dosim.faults (or DOSIM_FAULTS) needs -dosim.seed=N (or DOSIM_SEED): the seed whose run the faults replace"},
	} {
		t.Setenv("DOSIM_SEED", tc.seed)
		t.Setenv("DOSIM_FAULTS", tc.faults)
		ft := &fakeT{TB: t}
		assert.Nil(t, dosimtest.Func(ft, exhaustiveOpts, counterFunc))
		if assert.Len(t, ft.errors, 1, tc.faults) {
			assert.Contains(t, ft.errors[0], tc.want)
		}
	}
}
