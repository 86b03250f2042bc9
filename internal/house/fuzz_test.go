package house

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fuzzFunc finds the fuzz targets a test file declares.
var fuzzFunc = regexp.MustCompile(`(?m)^func (Fuzz\w*)\(\w+ \*testing\.F\)`)

// fuzzTargets reads the Makefile's FUZZ_TARGETS list as "dir:FuzzName"
// (a third field, the build note, dropped).
func fuzzTargets(makefile string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(makefile, "\n") {
		if strings.HasPrefix(line, "FUZZ_TARGETS ?=") {
			in = true
			continue
		}
		if !in {
			continue
		}
		t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "\\"))
		if t == "" {
			break
		}
		parts := strings.SplitN(t, ":", 3)
		out = append(out, parts[0]+":"+parts[1])
		if !strings.HasSuffix(strings.TrimSpace(line), "\\") {
			break
		}
	}
	return out
}

// checkFuzzTargets compares the fuzz targets the tests declare with the
// list make fuzz (and so CI) runs.
func checkFuzzTargets(declared, listed []string) []error {
	var errs []error
	for _, d := range declared {
		if !slices.Contains(listed, d) {
			errs = append(errs, fmt.Errorf("fuzz target %s is not in the Makefile's FUZZ_TARGETS: add it, or make fuzz never runs it", d))
		}
	}
	for _, l := range listed {
		if !slices.Contains(declared, l) {
			errs = append(errs, fmt.Errorf("the Makefile's FUZZ_TARGETS lists %s, which no test file declares: make fuzz would fail", l))
		}
	}
	return errs
}

// Every fuzz target is in make fuzz, and make fuzz names only targets
// that exist (a target moved to another package once broke CI's fuzz).
func TestEveryFuzzTargetIsInMakeFuzz(t *testing.T) {
	root := moduleRoot(t)
	files, err := moduleFiles(root)
	if err != nil {
		t.Fatalf("house: reading the module's files: %v", err)
	}
	var declared []string
	for _, f := range files {
		if !strings.HasSuffix(f.rel, "_test.go") || strings.HasPrefix(f.rel, "internal/house/") {
			continue
		}
		for _, m := range fuzzFunc.FindAllSubmatch(f.src, -1) {
			declared = append(declared, path.Dir(f.rel)+":"+string(m[1]))
		}
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatalf("house: %v", err)
	}
	listed := fuzzTargets(string(mk))
	if len(listed) == 0 || len(declared) == 0 {
		t.Fatalf("house: found %d fuzz targets in the tests and %d in the Makefile", len(declared), len(listed))
	}
	for _, err := range checkFuzzTargets(declared, listed) {
		t.Error(err)
	}
}

// The fuzz-target checker reports a target make fuzz misses and one it
// lists that is gone, and reads the Makefile's list with its third field.
func TestFuzzTargetCheckerCatchesMistakes(t *testing.T) {
	mk := "X = 1\nFUZZ_TARGETS ?= \\\n\ta:FuzzA \\\n\tb:FuzzB:sqlite \\\n\tc:FuzzGone\n\nrun:\n"
	listed := fuzzTargets(mk)
	if want := []string{"a:FuzzA", "b:FuzzB", "c:FuzzGone"}; !slices.Equal(listed, want) {
		t.Fatalf("fuzzTargets read %q, want %q", listed, want)
	}
	var got []string
	for _, err := range checkFuzzTargets([]string{"a:FuzzA", "b:FuzzB", "d:FuzzNew"}, listed) {
		got = append(got, err.Error())
	}
	want := []string{
		"fuzz target d:FuzzNew is not in the Makefile's FUZZ_TARGETS: add it, or make fuzz never runs it",
		"the Makefile's FUZZ_TARGETS lists c:FuzzGone, which no test file declares: make fuzz would fail",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the checker reported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
