package api_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/internal/buildflags"
)

// A user's module written against the API before a name moved builds,
// and go fix (Go 1.26's inliner, run by go fix -inline) rewrites it to
// the new names, after which it still builds: every moved name keeps a
// //go:fix inline forwarder (testdata/oldapi).
func TestGoFixMigratesTheOldAPI(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/oldapi/oldapi.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir, run := buildflags.UserModule(t, root, map[string][]byte{"oldapi.go": src})
	run("build", "./...")
	run("fix", "-inline", "./...")
	run("build", "./...")
	got, err := os.ReadFile(filepath.Join(dir, "oldapi.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{"explore.SeedPCT", "explore.SeedRandom", "explore.SeedSwarm", "explore.SeedStrategy", "CallsTo", "EffectsOf", "dosimtest.ReplayCommand"} {
		if strings.Contains(string(got), old) {
			t.Errorf("go fix left %s:\n%s", old, got)
		}
	}
	for _, now := range []string{"runtime.StrategyPCT", "runtime.StrategyRandom", "runtime.StrategySwarm", "[]runtime.Strategy",
		`rt.Calls(runtime.Match{Namespace: "BOOTH", Method: "Book"})`, `rt.Effects(runtime.Match{Effect: "email"})`, "runtimetest.ReplayCommand(t, seed)"} {
		if !strings.Contains(string(got), now) {
			t.Errorf("go fix did not write %s:\n%s", now, got)
		}
	}
}
