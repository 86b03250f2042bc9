package dosimtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/testrun"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/runtime/runtimetest"
)

// Func explores the fault space of fn, a Go function that drives objects
// (rule U3), over the seeds of opts: explore.NewFunc says what each seed
// runs and checks. A failure fails t with the lowest failing seed, its
// violations, its drawn faults shrunk by delta debugging and the one go
// test command that replays it (rule U4): -dosim.seed=N (or DOSIM_SEED=N)
// makes Func run that seed alone, print its text timeline and write its
// artifacts. A sweep that found nothing but checked too little fails t
// too (rule C3). Func returns the summary (nil when the options are bad).
//
// With Options.Exhaustive, a failure is the first failing placement of
// faults, shrunk, and replays by its faults, not by its seed's draws: the
// command ends -dosim.seed=N -dosim.faults=CALL:ATTEMPT:METHOD=FAULT,...,
// which makes Func run that seed with exactly those faults (FaultsFlag),
// once, and print its timeline.
func Func[O Sweep](t testing.TB, sweep O, fn func(ctx context.Context, rt *runtime.Runtime) error) *explore.Summary {
	t.Helper()
	opts := exploreOptions(sweep)
	fe, err := explore.NewFunc(opts, fn)
	if err != nil {
		t.Fatalf("dosimtest.Func: %v", err)
		return nil
	}
	seed, replay, err := testrun.ReplaySeed()
	if err != nil {
		t.Fatalf("dosimtest.Func: %v", err)
		return nil
	}
	rules, byFaults, err := replayFaults()
	switch {
	case err != nil:
		t.Fatalf("dosimtest.Func: %v", err)
		return nil
	case byFaults && !replay:
		t.Fatalf("dosimtest.Func: -%s (or DOSIM_FAULTS) needs -dosim.seed=N (or DOSIM_SEED): the seed whose run the faults replace", FaultsFlag)
		return nil
	case byFaults:
		return faultsReplay(t, fe, seed, rules)
	case replay:
		opts.First, opts.Seeds, opts.FromSeedZero = seed, 1, seed == 0
		if fe, err = explore.NewFunc(opts, fn); err != nil {
			t.Fatalf("dosimtest.Func: %v", err)
			return nil
		}
	}
	sum, err := fe.SweepContext(t.Context())
	if err != nil {
		t.Fatalf("dosimtest.Func: %v", err)
		return nil
	}
	switch {
	case sum.Clean():
	case sum.Total == 0: // rule C3: nothing failed, but too little was checked
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s\n", t.Name(), sum.NotCheckedEnough())
		sum.WriteChecked(&b)
		b.WriteString("(Options.MinChecked sets the minimum; a negative value sets none)")
		t.Errorf("%s", b.String())
	case sum.Exhaustive != nil && sum.FirstFailing != nil:
		t.Errorf("%s", exhaustiveFailure(t, fe, sum, replay))
	default:
		t.Errorf("%s", funcFailure(t, fe, sum, replay))
	}
	return sum
}

// funcFailure is the report of a failing sweep of fe: the first failing
// seed, its shrunk faults, the violations of the run the report describes
// (rule C5), the replay command, the timeline when the seed was replayed
// alone, and where the artifacts went.
func funcFailure(t testing.TB, fe *explore.FuncExplorer, sum *explore.Summary, replay bool) string {
	var b strings.Builder
	f := sum.FirstFailing
	fmt.Fprintf(&b, "%s: %d violation(s) in %d of %d seeds; the first, seed %d:\n", t.Name(), sum.Total, sum.Failed, sum.Ran, f.Seed)
	fmt.Fprintf(&b, "faults drawn %d, shrunk (%s, %d replays) to %d:\n%s", len(f.Faults), f.Shrink, f.Replays, len(f.Shrunk), explore.FaultsYAML(f.Shrunk))
	// Everything below describes one run, and says which (rule C5).
	writeRun(&b, t, f, fe.Rerun(f), testrun.ReplayCommand(t, f.Seed), replay)
	return b.String()
}

// ReplayCommand is the go test command that runs t alone with seed.
//
// Deprecated: use runtimetest.ReplayCommand, the one helper that says it
// (go test PACKAGE -run '^TEST$' -count=1 -dosim.seed=N).
//
//go:fix inline
func ReplayCommand(t testing.TB, seed uint64) string { return runtimetest.ReplayCommand(t, seed) }
