package runtimetest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/scenario"
)

// Explore sweeps sc's fault space (see package explore) and fails t if a
// seed violates an S-rule invariant, an explore.expect expectation or
// linearizability. The failure names the first failing seed, its shrunk
// faults and the command that replays it, and writes its artifacts (the
// timeline, porcupine's visualisation, the shrunk faults) under
// ArtifactsRoot, where they outlive the test. It returns the summary.
func Explore(t testing.TB, sc *scenario.Scenario, opts explore.Options) *explore.Summary {
	t.Helper()
	e, err := explore.New(sc, opts)
	if err != nil {
		t.Fatalf("runtimetest.Explore: %v", err)
		return nil
	}
	sum, err := e.Sweep()
	if err != nil {
		t.Fatalf("runtimetest.Explore: %v", err)
		return nil
	}
	if sum.Clean() {
		return sum
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d violation(s) in %d of %d seeds; the first:\n", sc.Name, sum.Total, sum.Failed, sum.Ran)
	if f := sum.FirstFailing; f != nil {
		for _, v := range f.Violations {
			fmt.Fprintf(&b, "  %s\n", v)
		}
		fmt.Fprintf(&b, "shrunk to %d fault(s):\n%s", len(f.Shrunk), explore.FaultsYAML(f.Shrunk))
		fmt.Fprintf(&b, "replay: %s\n", e.ReplayCommand(f.Seed))
		dir, err := artifactsDir(t, f.Seed)
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
