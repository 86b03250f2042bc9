package testrun_test

import (
	"testing"

	"github.com/dosim/dosim/internal/testrun"
	"github.com/stretchr/testify/assert"
)

// U4, C11: the printed replay names the test's own package wherever its
// binary runs: a go test -c binary run from the module root (or from a
// folder outside the module) names this package, not the folder it was
// started in.
func TestU4_TheReplayNamesTheTestsPackageFromAnyFolder(t *testing.T) {
	for _, dir := range []string{"../..", t.TempDir()} {
		t.Chdir(dir)
		assert.Equal(t, "go test github.com/dosim/dosim/internal/testrun -run '^TestX$' -count=1 -dosim.seed=3",
			testrun.ReplayCommand(named("TestX"), 3), "run from %s", dir)
	}
}
