package buildflags

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// raceFlags are the Makefile's RACE flags, which race_on.go repeats.
const raceFlags = "-race -gcflags=modernc.org/sqlite/lib=-race=false -gcflags=modernc.org/libc/...=-race=false -gcflags=modernc.org/memory=-race=false"

// The Makefile's RACE is the flags a race build of this package says it
// was built with.
func TestRaceIsTheMakefiles(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RACE \?= (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no RACE ?= ...")
	}
	if string(m[1]) != raceFlags {
		t.Fatalf("the Makefile's RACE is %q, race_on.go's %q: make them one", m[1], raceFlags)
	}
	if Race != "" && Race != raceFlags {
		t.Fatalf("Race is %q, want %q or empty", Race, raceFlags)
	}
}

// Setenv sets GOFLAGS to Race in a race build, leaves a GOFLAGS the user
// set alone, and does nothing in a build without the race detector.
func TestSetenv(t *testing.T) {
	t.Setenv("GOFLAGS", "")
	if err := Setenv(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("GOFLAGS"); got != Flags() {
		t.Fatalf("GOFLAGS = %q, want %q", got, Flags())
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	if err := Setenv(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("GOFLAGS"); got != "-mod=mod" {
		t.Fatalf("a GOFLAGS the user set became %q", got)
	}
}

// TestToolTestsRunInMakeTest: make test's race step tests every package
// but the Makefile's TOOL_PACKAGES and skips TOOL_TESTS; its second step
// runs TOOL_TESTS (and explore's FULL_SIZE_TESTS) in TOOL_PACKAGES,
// examples/wallet and explore. So every test of a tool package must match
// TOOL_TESTS, and a test elsewhere that matches it must be in one of the
// second step's packages: either slip would leave a test no step runs.
func TestToolTestsRunInMakeTest(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{
		"-skip '$(TOOL_TESTS)' $$($(race_packages))",
		"race_packages = $(GO) list $(LONGEST_FIRST) ./... | grep -vxF $(TOOL_PACKAGES:./%=-e github.com/dosim/dosim/%)",
		"-run '$(FULL_SIZE_TESTS)|$(TOOL_TESTS)' ./explore ./examples/wallet $(TOOL_PACKAGES)",
	} {
		if !bytes.Contains(mk, []byte(step)) {
			t.Fatalf("make test has no %s", step)
		}
	}
	m := regexp.MustCompile(`(?m)^TOOL_TESTS \?= (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no TOOL_TESTS ?= <pattern>")
	}
	toolTests, err := regexp.Compile(strings.ReplaceAll(string(m[1]), "$$", "$")) // make's $$ is the shell's $
	if err != nil {
		t.Fatalf("TOOL_TESTS: %v", err)
	}
	m = regexp.MustCompile(`(?m)^TOOL_PACKAGES \?= (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no TOOL_PACKAGES ?= ...")
	}
	tools := strings.Fields(string(m[1]))
	secondStep := append([]string{"./explore", "./examples/wallet"}, tools...)
	testFunc := regexp.MustCompile(`(?m)^func (Test\w*)\(`)
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := "./" + filepath.ToSlash(strings.TrimPrefix(filepath.Dir(path), "../../"))
		for _, f := range testFunc.FindAllSubmatch(src, -1) {
			name := string(f[1])
			switch {
			case name == "TestMain":
			case slices.Contains(tools, dir):
				if !toolTests.MatchString(name) {
					t.Errorf("%s in %s, one of TOOL_PACKAGES, is not matched by TOOL_TESTS: no step of make test runs it", name, path)
				}
			case toolTests.MatchString(name) && !slices.Contains(secondStep, dir):
				t.Errorf("%s in %s matches TOOL_TESTS, which the race step skips, but the second step tests only %v", name, path, secondStep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range tools {
		if _, err := os.Stat(filepath.Join("../..", dir)); err != nil {
			t.Errorf("TOOL_PACKAGES names %s: %v", dir, err)
		}
	}
}
