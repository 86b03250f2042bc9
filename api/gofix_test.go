package api_test

import (
	"os"
	"os/exec"
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
	if testing.Short() {
		t.Skip("builds a module of its own: run without -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/oldapi/oldapi.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/oldapi\n\ngo 1.26\n\nrequire github.com/dosim/dosim v0.0.0\n\nreplace github.com/dosim/dosim => " + root + "\n"
	for name, data := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "oldapi.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod "+buildflags.Flags())
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("build", "./...")
	run("fix", "-inline", "./...")
	run("build", "./...")
	got, err := os.ReadFile(filepath.Join(dir, "oldapi.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{"explore.SeedPCT", "explore.SeedRandom", "explore.SeedSwarm", "explore.SeedStrategy"} {
		if strings.Contains(string(got), old) {
			t.Errorf("go fix left %s:\n%s", old, got)
		}
	}
	for _, now := range []string{"runtime.StrategyPCT", "runtime.StrategyRandom", "runtime.StrategySwarm", "[]runtime.Strategy"} {
		if !strings.Contains(string(got), now) {
			t.Errorf("go fix did not write %s:\n%s", now, got)
		}
	}
}
