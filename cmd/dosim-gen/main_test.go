package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the module's root, two folders up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// directive is one //go:generate line that runs dosim-gen.
type directive struct {
	file string   // the Go file that holds it
	args []string // dosim-gen's arguments
}

// directives finds every go:generate line of the module that runs
// dosim-gen, outside testdata.
func directives(t *testing.T, root string) []directive {
	t.Helper()
	var out []directive
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(src), "\n") {
			rest, ok := strings.CutPrefix(line, "//go:generate ")
			if !ok {
				continue
			}
			fields := strings.Fields(rest)
			for i, f := range fields {
				if f == "github.com/dosim/dosim/cmd/dosim-gen" || f == "dosim-gen" {
					out = append(out, directive{file: p, args: fields[i+1:]})
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCurrent writes the stubs dir's directive asks for into a temporary
// file and compares them with checkedIn, the file go generate wrote.
func checkCurrent(t *testing.T, dir string, args []string, checkedIn string) error {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "stub.go")
	var stderr bytes.Buffer
	full := append(append([]string{}, args...), "-output", tmp, dir)
	if code := run(full, &stderr); code != 0 {
		return fmt.Errorf("dosim-gen %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	got, err := os.ReadFile(tmp)
	if err != nil {
		return err
	}
	want, err := os.ReadFile(checkedIn)
	if err != nil {
		return fmt.Errorf("%w: run go generate in %s", err, dir)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s is stale: its class's Methods changed since it was written; run go generate in %s", checkedIn, dir)
	}
	return nil
}

// outputOf is the file a directive's dosim-gen writes.
func outputOf(dir string, args []string) string {
	for i, a := range args {
		if (a == "-output" || a == "--output") && i+1 < len(args) {
			return filepath.Join(dir, args[i+1])
		}
	}
	for i, a := range args {
		if (a == "-type" || a == "--type") && i+1 < len(args) {
			first, _, _ := strings.Cut(args[i+1], ",")
			return filepath.Join(dir, strings.ToLower(first)+"_stub.go")
		}
	}
	return ""
}

// Every typed stub in the module is what dosim-gen writes today from its
// class's Methods: a stub left stale by a changed class fails here.
func TestGeneratedStubsAreCurrent(t *testing.T) {
	ds := directives(t, repoRoot(t))
	if len(ds) == 0 {
		t.Fatal("no //go:generate line runs dosim-gen: examples/wallet should have one")
	}
	for _, d := range ds {
		dir := filepath.Dir(d.file)
		if err := checkCurrent(t, dir, withoutOutput(d.args), outputOf(dir, d.args)); err != nil {
			t.Error(err)
		}
	}
}

// withoutOutput drops a directive's -output, which the test replaces.
func withoutOutput(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "-output" || args[i] == "--output" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// The staleness check fails on a stub that differs from what dosim-gen
// writes: here the wallet's, with one line changed.
func TestGeneratedStubsAreCurrentCatchesAStaleStub(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "examples", "wallet")
	src, err := os.ReadFile(filepath.Join(dir, "wallet_stub.go"))
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(t.TempDir(), "wallet_stub.go")
	old := bytes.Replace(src, []byte(`"Withdraw", amount)`), []byte(`"Withdraw", amount, 0)`), 1)
	if bytes.Equal(old, src) {
		t.Fatal("wallet_stub.go has no Withdraw call to change")
	}
	if err := os.WriteFile(stale, old, 0o644); err != nil {
		t.Fatal(err)
	}
	err = checkCurrent(t, dir, []string{"-type", "Wallet"}, stale)
	if err == nil || !strings.Contains(err.Error(), "is stale") || !strings.Contains(err.Error(), "go generate") {
		t.Fatalf("want a stale-stub error that says to run go generate, got %v", err)
	}
}

// Usage errors exit 2 and say what is wanted; a class the generator
// cannot read exits 1 and names it.
func TestDosimGenBadInput(t *testing.T) {
	wallet := filepath.Join(repoRoot(t), "examples", "wallet")
	out := filepath.Join(t.TempDir(), "x.go")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: dosim-gen -type T"},
		{[]string{"-type", "Wallet", "a", "b"}, 2, "usage: dosim-gen -type T"},
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"-type", "Purse", "-output", out, wallet}, 1, "package github.com/dosim/dosim/examples/wallet declares no type Purse"},
		{[]string{"-type", "Wallet", "-output", out, filepath.Join(wallet, "nowhere")}, 1, "nowhere"},
	} {
		var stderr bytes.Buffer
		code := run(tc.args, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("dosim-gen %q: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
