package explore

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/internal/testrun"
	"github.com/dosim/dosim/scenario"
)

// Test sweeps sc's fault space from go test, as httptest serves from
// beside net/http: it fails t if a seed violates an S-rule invariant, an
// explore.expect expectation or linearizability. The failure names the
// first failing seed, its shrunk faults and the command that replays it,
// and writes its artifacts (the timeline, porcupine's visualisation, the
// shrunk faults) to a folder that outlives the test: under
// -dosim.artifacts (registered by package runtimetest), else
// DOSIM_ARTIFACTS, else dosim-artifacts/PACKAGE in the system's temporary
// folder. It returns the summary.
func Test(t testing.TB, sc *scenario.Scenario, opts Options) *Summary {
	t.Helper()
	e, err := New(sc, opts)
	if err != nil {
		t.Fatalf("explore.Test: %v", err)
		return nil
	}
	sum, err := e.Sweep()
	if err != nil {
		t.Fatalf("explore.Test: %v", err)
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
		fmt.Fprintf(&b, "seed %d, shrunk to %d fault(s):\n%s", f.Seed, len(f.Shrunk), FaultsYAML(f.Shrunk))
		fmt.Fprintf(&b, "%s violates:\n", f.RunText())
		for _, v := range f.Violations {
			fmt.Fprintf(&b, "  %s\n", v)
		}
		fmt.Fprintf(&b, "replay: %s\n", e.ReplayCommand(f.Seed))
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
