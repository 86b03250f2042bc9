// Package buildflags tells a test that runs the go command with which
// flags its own binary was built, so that the child build reuses what
// the test's build compiled (SQLite, most of all, costs some 40 s of CPU
// each time it is compiled with other flags) instead of compiling it
// again.
package buildflags

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Flags is the flags this binary was built with that a child build must
// repeat to reuse its build: Race and Tags, or "" for neither.
func Flags() string {
	return strings.TrimSpace(Race + " " + Tags)
}

// Setenv sets GOFLAGS, for the go commands the test binary runs from now
// on (go list under golang.org/x/tools/go/packages, go vet, go build), to
// Flags, unless GOFLAGS is set already. Call it from TestMain. A child
// that builds a tool it then runs (go build of a vettool) should clear
// GOFLAGS for that build: a tool built with the race detector runs many
// times slower.
func Setenv() error {
	if Flags() == "" || os.Getenv("GOFLAGS") != "" {
		return nil
	}
	return os.Setenv("GOFLAGS", Flags())
}

// Main is a TestMain for a package whose tests run the go command: it
// calls Setenv, then runs the tests and exits with their status.
func Main(m *testing.M) {
	if err := Setenv(); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// UserModule writes a module of a user's in a temporary directory (go.mod
// requiring dosim, replaced by the checkout at root, and root's go.sum,
// beside files, named by their path in the module) and returns it with
// a function that runs the go command in it with Flags, failing t when
// the command fails. The tests that build what a user would build call
// it: the api package's go fix test, cli's test of what a binary links.
// It skips t under -short or without a go command.
func UserModule(t testing.TB, root string, files map[string][]byte) (dir string, goCmd func(args ...string) []byte) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a module of its own: run without -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	mod := "module example.com/user\n\ngo 1.26\n\nrequire github.com/dosim/dosim v0.0.0\n\nreplace github.com/dosim/dosim => " + root + "\n"
	files = maps.Clone(files)
	files["go.mod"], files["go.sum"] = []byte(mod), sum
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod "+Flags())
	return dir, func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return out
	}
}
