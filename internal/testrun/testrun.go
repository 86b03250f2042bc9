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
