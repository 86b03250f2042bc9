// Package testrun holds what dosim's go test helpers share: the seed a test
// runs with and the folder its failure artifacts go to. The helpers are
// runtimetest (New, Report), explore.Test and verify.Test.
//
// The flags -dosim.seed and -dosim.artifacts are registered by package
// runtimetest, so that a binary which never runs tests (the dosim command
// links explore and verify) does not grow them; this package reads them
// by name when they exist and falls back on the environment variables
// DOSIM_SEED and DOSIM_ARTIFACTS.
package testrun

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Flag names, as runtimetest registers them.
const (
	SeedFlag      = "dosim.seed"
	ArtifactsFlag = "dosim.artifacts"
)

// DefaultSeed is the seed used when neither -dosim.seed nor DOSIM_SEED is set.
const DefaultSeed uint64 = 1

// flagValue is the value of the registered flag name, "" if unregistered.
func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// Seed returns -dosim.seed, else DOSIM_SEED, else DefaultSeed. A malformed
// value is an error naming where it came from.
func Seed() (uint64, error) {
	for _, src := range []struct{ name, v string }{{"-" + SeedFlag, flagValue(SeedFlag)}, {"DOSIM_SEED", os.Getenv("DOSIM_SEED")}} {
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

// ArtifactsRoot returns the folder under which failure artifacts are
// written: -dosim.artifacts, else DOSIM_ARTIFACTS, else
// dosim-artifacts/PACKAGE under os.TempDir (PACKAGE is the base name of the
// working directory, the package's folder under go test). It is absolute.
func ArtifactsRoot() string {
	base := flagValue(ArtifactsFlag)
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
// seed: -dosim.seed=N when the flag is registered (the test binary links
// runtimetest), else DOSIM_SEED=N before the command. The package is named
// by its import path, so the command runs from anywhere inside the module,
// on any machine; outside a module, by its folder.
func ReplayCommand(t interface{ Name() string }, seed uint64) string {
	name := "^" + regexp.QuoteMeta(t.Name()) + "$"
	name = strings.ReplaceAll(name, "/", "$/^")
	pkg := packagePath()
	if flag.Lookup(SeedFlag) != nil {
		return fmt.Sprintf("go test %s -run '%s' -count=1 -%s=%d", pkg, name, SeedFlag, seed)
	}
	return fmt.Sprintf("DOSIM_SEED=%d go test %s -run '%s' -count=1", seed, pkg, name)
}

// packagePath is the import path of the package whose folder is the
// working directory (go test runs a test there): the module path from the
// nearest go.mod above it, joined with the folders in between.
func packagePath() string {
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
