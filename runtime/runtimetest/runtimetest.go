// Package runtimetest is dosim's test harness, beside package runtime as
// httptest is beside net/http.
//
//	func TestShop(t *testing.T) {
//		rt := runtimetest.New(t)
//		ns := rt.Namespace("SHOP", NewShop)
//		runtimetest.Run(t, rt, func(ctx context.Context) error { ... })
//		dosimtest.Verify(t, ns, "SetPrice", 12)
//	}
//
// New gives a runtime that logs through the test, checks that no goroutine
// outlives it, takes its seed from -dosim.seed or DOSIM_SEED (else 1), and,
// when the test fails, prints the seed with the command that replays it and
// writes an artifact folder: the JSON call history (in the shape of dosim
// run --format json, docs/records.md) and the HTML timeline.
//
// The heavier go test entry points are in package dosimtest:
// dosimtest.Func and dosimtest.Scenario sweep a function's or a scenario's
// fault space, dosimtest.Verify checks that a method marked
// object.Retryable is idempotent. This package links none of what they
// need (the explorer, the verifier, YAML), so a test of runtime code alone
// stays small; both read the same flags.
//
// # Flags and environment
//
// Pass them after the package, as go test passes them to the test binary:
//
//	go test ./shop -run TestShop -dosim.seed=42 -dosim.artifacts=out
//
// The flags, each with the environment variable it falls back on:
//
//   - -dosim.seed=N (or DOSIM_SEED=N): the seed of every runtime New makes.
//   - -dosim.debug (or DOSIM_DEBUG=1): log every delivery at DEBUG; off by
//     default, when New logs at INFO and above.
//   - -dosim.artifacts=DIR (or DOSIM_ARTIFACTS=DIR): where failure artifacts
//     go, a relative DIR being relative to the package's folder (where go
//     test runs the test). By default they go to dosim-artifacts/PACKAGE
//     under the system's temporary folder (os.TempDir), one folder per test
//     and seed, TEST-seed-N. They are not removed when the test ends (a
//     t.TempDir would be), so the printed path can be opened afterwards; a
//     later run of the same test and seed overwrites them.
package runtimetest

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dosim/dosim/internal/testrun"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
)

// DefaultSeed is the seed used when neither -dosim.seed nor DOSIM_SEED is set.
const DefaultSeed uint64 = testrun.DefaultSeed

// Seed returns the seed runtimes made by New use: -dosim.seed, else the
// DOSIM_SEED environment variable, else DefaultSeed. A malformed value
// fails the test, naming where it came from.
func Seed(t testing.TB) uint64 {
	t.Helper()
	n, err := testrun.Seed()
	if err != nil {
		t.Fatalf("runtimetest: %v", err)
	}
	return n
}

// New returns a runtime for t: seeded by Seed, logging through the test,
// closed at the end of the test with a check that none of its goroutines
// survived, and reporting the replay command and artifacts if t fails.
// Options given here come after the harness's, so WithSeed overrides Seed.
func New(t testing.TB, opts ...runtime.Option) *runtime.Runtime {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	seed := Seed(t)
	rt := runtime.New(append([]runtime.Option{runtime.WithSeed(seed), runtime.WithLogger(zaptest.NewLogger(t, zaptest.Level(LogLevel())))}, opts...)...)
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Errorf("runtimetest: closing the runtime: %v", err)
		}
		if err := goleak.Find(ignore); err != nil {
			t.Errorf("runtimetest: goroutines outlived the runtime: %v", err)
		}
		// After the leak check, so that a leak, too, prints the seed and
		// the replay line.
		if t.Failed() {
			Report(t, rt)
		}
	})
	return rt
}

// DebugFlag is the flag, without its dash, that turns on the runtime's
// DEBUG log (a line per delivery) in runtimes made by New; the environment
// variable DOSIM_DEBUG=1 does the same. Without either, New logs at INFO
// and above, so that go test -v shows the test's own lines.
const DebugFlag = "dosim.debug"

var debugFlag = flag.Bool(DebugFlag, false, "log every delivery at DEBUG in runtimes made by runtimetest.New (default: $DOSIM_DEBUG, else off)")

// LogLevel returns the level New logs at: zap.DebugLevel when -dosim.debug
// is given or DOSIM_DEBUG is set to a true value (1, true), else
// zap.InfoLevel. Pass runtime.WithLogger to New for another logger.
func LogLevel() zapcore.Level {
	if *debugFlag {
		return zap.DebugLevel
	}
	if on, err := strconv.ParseBool(os.Getenv("DOSIM_DEBUG")); err == nil && on {
		return zap.DebugLevel
	}
	return zap.InfoLevel
}

// Run runs fn in rt and fails t if it returns an error, a deadlock or a
// panic, naming the seed.
func Run(t testing.TB, rt *runtime.Runtime, fn func(ctx context.Context) error) {
	t.Helper()
	if err := rt.Run(fn); err != nil {
		t.Fatalf("dosim: seed %d: %s", rt.Seed(), strings.TrimPrefix(err.Error(), "dosim: "))
	}
}

// Report prints rt's seed, the command that replays the test, and writes
// the artifact folder. New calls it when a test fails; call it yourself to
// keep artifacts of a passing test.
func Report(t testing.TB, rt *runtime.Runtime) {
	t.Helper()
	t.Logf("dosim: seed %d; replay with: %s", rt.Seed(), ReplayCommand(t, rt.Seed()))
	dir, err := WriteArtifacts(t, rt)
	if err != nil {
		t.Logf("dosim: could not write artifacts: %v", err)
		return
	}
	t.Logf("dosim: artifacts in %s", dir)
}

// ReplayCommand returns the go test command that runs t alone again with
// seed: go test PACKAGE -run '^TEST$' -count=1 -dosim.seed=N, the package
// named by its import path so that the command runs from anywhere in the
// module.
func ReplayCommand(t testing.TB, seed uint64) string { return testrun.ReplayCommand(t, seed) }

// ArtifactsRoot returns the folder under which failure artifacts are
// written, one folder per test and seed: -dosim.artifacts, else the
// DOSIM_ARTIFACTS environment variable, else dosim-artifacts/PACKAGE under
// os.TempDir (PACKAGE is the base name of the package's folder). It is
// absolute, so that a printed path opens from anywhere. Nothing removes it
// when the test ends.
func ArtifactsRoot() string { return testrun.ArtifactsRoot() }

// WriteArtifacts writes rt's history (calls.json) and timeline
// (timeline.html, trace.txt) to a folder for t under ArtifactsRoot and
// returns its path. The folder outlives the test. calls.json is what
// dosim run --format json writes, one shape for records everywhere
// (docs/records.md): an array of one report, named after the test, with
// the seed, every call and every effect, times in virtual milliseconds
// (jq '.[0].calls').
func WriteArtifacts(t testing.TB, rt *runtime.Runtime) (string, error) {
	dir, err := testrun.ArtifactsDir(t.Name(), rt.Seed())
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	rep := render.Report{Name: t.Name(), Seed: rt.Seed(), Calls: rt.Calls(), Effects: rt.Effects()}
	if err := render.JSON(&b, rep); err != nil {
		return "", fmt.Errorf("encoding the history: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "calls.json"), b.Bytes(), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.txt"), []byte(rt.Trace()), 0o644); err != nil {
		return "", err
	}
	if err := writeTimeline(filepath.Join(dir, "timeline.html"), t.Name(), rt); err != nil {
		return "", err
	}
	return dir, nil
}
