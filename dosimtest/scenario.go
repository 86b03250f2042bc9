package dosimtest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/testrun"
	"github.com/dosim/dosim/scenario"
)

// Scenario sweeps sc's fault space from go test (explore.Run): it fails t
// if a seed violates an S-rule invariant, an explore.expect expectation,
// linearizability or liveness, or if the sweep checked too little (rule
// C3). The failure names the first failing seed, its shrunk faults and
// the dosim explore command that replays it, and writes its artifacts
// (the timeline, porcupine's visualisation, the shrunk faults) to a folder
// that outlives the test: under -dosim.artifacts, else DOSIM_ARTIFACTS,
// else dosim-artifacts/PACKAGE in the system's temporary folder. It
// returns the summary (nil when the options are bad).
func Scenario[O Sweep](t testing.TB, sc *scenario.Scenario, sweep O) *explore.Summary {
	t.Helper()
	opts := exploreOptions(sweep)
	e, err := explore.New(sc, opts)
	if err != nil {
		t.Fatalf("dosimtest.Scenario: %v", err)
		return nil
	}
	sum, err := e.Sweep()
	if err != nil {
		t.Fatalf("dosimtest.Scenario: %v", err)
		return nil
	}
	if sum.Clean() {
		return sum
	}
	var b strings.Builder
	if sum.Total == 0 { // rule C3: nothing failed, but too little was checked
		fmt.Fprintf(&b, "%s: %s\n", sc.Name, sum.NotCheckedEnough())
		sum.WriteChecked(&b)
		t.Errorf("%s", b.String())
		return sum
	}
	fmt.Fprintf(&b, "%s: %d violation(s) in %d of %d seeds; the first:\n", sc.Name, sum.Total, sum.Failed, sum.Ran)
	if f := sum.FirstFailing; f != nil {
		fmt.Fprintf(&b, "seed %d, shrunk to %d fault(s):\n%s", f.Seed, len(f.Shrunk), explore.FaultsYAML(f.Shrunk))
		fmt.Fprintf(&b, "%s violates:\n", f.RunText())
		for _, v := range f.Violations {
			fmt.Fprintf(&b, "  %s\n", v)
		}
		fmt.Fprintf(&b, "replay: %s\n", sum.ReplayCommand(f.Seed)) // an exhaustive search's carries its faults
		dir, err := testrun.ArtifactsDir(t.Name(), f.Seed)
		if err == nil {
			files, werr := e.WriteArtifacts(filepath.Join(dir, "explore"), f)
			if werr == nil && len(files) > 0 {
				fmt.Fprintf(&b, "artifacts in %s", filepath.Dir(files[0]))
			}
		}
	}
	t.Errorf("%s", b.String())
	return sum
}
