// Package testrun is the part of dosim's go test helpers that they share:
// the seed and artifact flags, the seed a test runs with, the folder its
// failure artifacts go to and the command that replays it. The helpers are
// package dosimtest (Func, Scenario, Verify) and the light harness
// runtimetest (New, Run, Report); nothing else imports this package.
//
// This package defines the flags -dosim.seed and -dosim.artifacts itself,
// once, with the flag package: every test binary that links a helper has
// them, and the dosim command, which links neither helper (explore and
// verify import no testing code), does not grow them. Each flag falls back
// on an environment variable: DOSIM_SEED and DOSIM_ARTIFACTS.
package testrun

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
)

// Flag names, without the leading dash.
const (
	SeedFlag      = "dosim.seed"
	ArtifactsFlag = "dosim.artifacts"
)

// The flags, registered on the command line once, when a test binary
// links this package.
var (
	seedFlag      = flag.String(SeedFlag, "", "seed of dosim's test helpers (runtimetest.New, dosimtest.Func's replay, dosimtest.Verify) (default: $DOSIM_SEED, else 1)")
	artifactsFlag = flag.String(ArtifactsFlag, "", "folder for failure artifacts, kept after the test (default: $DOSIM_ARTIFACTS, else dosim-artifacts/PACKAGE in the system's temporary folder)")
)

// DefaultSeed is the seed used when neither -dosim.seed nor DOSIM_SEED is set.
const DefaultSeed uint64 = 1

// Seed returns -dosim.seed, else DOSIM_SEED, else DefaultSeed. A malformed
// value is an error naming where it came from.
func Seed() (uint64, error) {
	for _, src := range []struct{ name, v string }{{"-" + SeedFlag, *seedFlag}, {"DOSIM_SEED", os.Getenv("DOSIM_SEED")}} {
		if src.v == "" {
			continue
		}
		n, err := strconv.ParseUint(src.v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s=%q: want an unsigned integer seed", src.name, src.v)
		}
		return n, nil
	}
	return DefaultSeed, nil
}

// ReplaySeed returns the seed -dosim.seed or DOSIM_SEED asks for and true,
// or false when neither is set: a sweep then runs all its seeds.
func ReplaySeed() (uint64, bool, error) {
	if *seedFlag == "" && os.Getenv("DOSIM_SEED") == "" {
		return 0, false, nil
	}
	s, err := Seed()
	return s, err == nil, err
}

// ArtifactsRoot returns the folder under which failure artifacts are
// written: -dosim.artifacts, else DOSIM_ARTIFACTS, else
// dosim-artifacts/PACKAGE under os.TempDir (PACKAGE is the base name of the
// working directory, the package's folder under go test). It is absolute.
func ArtifactsRoot() string {
	base := *artifactsFlag
	if base == "" {
		base = os.Getenv("DOSIM_ARTIFACTS")
	}
	if base == "" {
		pkg := "test"
		if wd, err := os.Getwd(); err == nil {
			pkg = filepath.Base(wd)
		}
		base = filepath.Join(os.TempDir(), "dosim-artifacts", pkg)
	}
	if abs, err := filepath.Abs(base); err == nil {
		base = abs
	}
	return base
}

// ArtifactsDir makes and returns the folder of the test named test (as
// testing.TB.Name spells it) run with seed: TEST-seed-N under
// ArtifactsRoot, slashes and spaces of the name made underscores.
func ArtifactsDir(test string, seed uint64) (string, error) {
	safe := strings.NewReplacer("/", "_", " ", "_", string(filepath.Separator), "_").Replace(test)
	dir := filepath.Join(ArtifactsRoot(), fmt.Sprintf("%s-seed-%d", safe, seed))
	return dir, os.MkdirAll(dir, 0o755)
}

// ReplayCommand is the go test command that runs the test t alone with
// seed, passing -dosim.seed=N to the test binary (which has the flag: it
// links this package). The package is named by its import path, so the
// command runs from anywhere inside the module, on any machine; outside a
// module, by its folder.
func ReplayCommand(t interface{ Name() string }, seed uint64) string {
	name := "^" + regexp.QuoteMeta(t.Name()) + "$"
	name = strings.ReplaceAll(name, "/", "$/^")
	return fmt.Sprintf("go test %s -run '%s' -count=1 -%s=%d", packagePath(), name, SeedFlag, seed)
}

// packagePath is the import path of the package under test: the test
// binary's own, as its build information names it (PACKAGE.test), so that
// a binary built with go test -c and run from anywhere names its package.
// Without it, the package whose folder is the working directory (go test
// runs a test there).
func packagePath() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if pkg, ok := strings.CutSuffix(bi.Path, ".test"); ok && pkg != "" {
			return pkg
		}
	}
	return folderPackage()
}

// folderPackage is the import path of the package whose folder is the
// working directory: the module path from the nearest go.mod above it,
// joined with the folders in between.
func folderPackage() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			mod := modfile(data)
			rel, err := filepath.Rel(dir, wd)
			if mod == "" || err != nil {
				return wd
			}
			if rel == "." {
				return mod
			}
			return mod + "/" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd
		}
		dir = parent
	}
}

// modfile returns the module path a go.mod declares, or "".
func modfile(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
