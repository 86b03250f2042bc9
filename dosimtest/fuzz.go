package dosimtest

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/testrun"
	"github.com/dosim/dosim/runtime"
)

// Fuzz makes f a coverage-guided search of fn's decisions (rule U3): Go's
// native fuzzer (go test -fuzz) chooses each run's faults, link latencies
// and same-instant tie-breaks from its input, as explore.Input says, and
// each input is checked as a seed of Func is (the S invariants,
// linearizability, fn's own error; explore.FuncExplorer.CheckInput). The
// fuzz arguments are (seed uint64, decisions []byte, ties []byte):
// decision i reads byte i of decisions (faults, latencies), and draw i of
// the scheduler byte i of ties (tie-breaks, backoff jitter, PCT's
// priorities and change points), so the fuzzer's small edits of the bytes
// make small edits of the schedule, and when the bytes run out the seed
// draws the rest, as in Func. Under the default strategy, mix, the first
// tie byte picks the input's strategy (random, swarm or PCT, by the mix's
// shares) and, for PCT, the second its depth: the fuzzer steers the
// strategy through its bytes, not only by changing the seed.
//
//	func FuzzWallet(f *testing.F) {
//		dosimtest.Fuzz(f, explore.Options{Seeds: 20}, walletFunc)
//	}
//
// The seed corpus is opts.Seeds seeds (0: one) from opts.First, each with
// no bytes: plain go test runs them as Func runs those seeds, and
// go test -fuzz=FuzzWallet starts from them. A failing input fails the
// test with Func's report: its faults shrunk by delta debugging, the
// violations, the go test command that replays it and, when a corpus file
// is replayed, its timeline. go test -fuzz writes a failing input to
// testdata/fuzz/FuzzWallet/ID, and go test -run '^FuzzWallet$/^ID$'
// replays it, as any failing seed replays. Coverage counts every package
// linked into the test, dosim's own as well as the user's: Go has no flag
// to narrow it (see docs/objects.md, "Coverage-guided search").
//
// Bad options fail f before anything runs, and so does Exhaustive
// (explore.FuzzOptions). Options.Workers does not
// apply (the fuzzer runs its own workers: -parallel).
func Fuzz[O Sweep](f *testing.F, sweep O, fn func(ctx context.Context, rt *runtime.Runtime) error) {
	f.Helper()
	opts := exploreOptions(sweep)
	if opts.Seeds == 0 {
		opts.Seeds = 1
	}
	fe, err := explore.NewFunc(opts, fn)
	if err == nil {
		err = explore.FuzzOptions(opts)
	}
	if err != nil {
		f.Fatalf("dosimtest.Fuzz: %v", err)
		return
	}
	o := fe.Options()
	for k := range o.Seeds {
		f.Add(o.First+uint64(k), []byte(nil), []byte(nil))
	}
	f.Fuzz(func(t *testing.T, seed uint64, decisions, ties []byte) {
		checkInput(t, fe, explore.Input{Seed: seed, Bytes: decisions, Ties: ties})
	})
}

// Input checks one input of Fuzz's (a seed and its bytes) as
// Fuzz checks it, and fails t with the same report: a failing input kept
// as a regression test without a corpus file. It returns what
// CheckInput found (nil when the options are bad). opts.Seeds may be 0.
func Input[O Sweep](t testing.TB, sweep O, fn func(ctx context.Context, rt *runtime.Runtime) error, in explore.Input) *explore.Failing {
	t.Helper()
	opts := exploreOptions(sweep)
	if opts.Seeds == 0 {
		opts.Seeds = 1 // one input, not a sweep
	}
	fe, err := explore.NewFunc(opts, fn)
	if err == nil {
		err = explore.FuzzOptions(opts)
	}
	if err != nil {
		t.Fatalf("dosimtest.Input: %v", err)
		return nil
	}
	return checkInput(t, fe, in)
}

// checkInput checks in and fails t with the report when it fails.
func checkInput(t testing.TB, fe *explore.FuncExplorer, in explore.Input) *explore.Failing {
	t.Helper()
	f := fe.CheckInput(in)
	if len(f.Violations) > 0 {
		t.Errorf("%s", inputFailure(t, fe, in, f))
	}
	return f
}

// inputFailure is the report of a failing input, as funcFailure writes a
// failing seed's: the input, its shrunk faults, the violations of the run
// the report describes (rule C5), how to replay it, the timeline when a
// corpus file is replayed, and where the artifacts went.
func inputFailure(t testing.TB, fe *explore.FuncExplorer, in explore.Input, f *explore.Failing) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d violation(s) in the input (%s):\n", t.Name(), len(f.Violations), in)
	fmt.Fprintf(&b, "faults drawn %d, shrunk (%s, %d replays) to %d:\n%s", len(f.Faults), f.Shrink, f.Replays, len(f.Shrunk), explore.FaultsYAML(f.Shrunk))
	run := fe.RerunInput(in, f)
	fmt.Fprintf(&b, "%s violates:\n", in.RunText(f))
	for _, v := range f.Violations {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	cmd := fuzzReplayCommand(t, in)
	fmt.Fprintf(&b, "replay: %s\n", cmd)
	if replayed := corpusEntry(t.Name()); replayed != "" && !strings.HasPrefix(replayed, "seed#") {
		var tl bytes.Buffer
		if err := run.WriteTimeline(&tl); err == nil {
			fmt.Fprintf(&b, "timeline of %s:\n%s", in.RunText(f), tl.String())
		}
	}
	if dir, err := testrun.ArtifactsDir(t.Name(), in.Seed); err == nil {
		if err := run.WriteArtifacts(filepath.Join(dir, "explore"), cmd); err == nil {
			fmt.Fprintf(&b, "artifacts in %s", filepath.Join(dir, "explore"))
		}
	}
	return b.String()
}

// corpusEntry is the corpus entry a fuzz test's name ends with
// (FuzzX/3f2a... for a file of testdata/fuzz, FuzzX/seed#0 for an f.Add
// entry), or "" while the fuzzer runs (FuzzX alone).
func corpusEntry(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[i+1:]
	}
	return ""
}

// fuzzReplayCommand is the go test command that replays in: the corpus
// entry t runs, by name, when it is one (a file of testdata/fuzz or an
// f.Add seed); while the fuzzer runs, the entry go test -fuzz is about to
// write (it names the file by a hash of its contents, which
// Input.CorpusFile computes), with the file's contents to save by hand
// when -fuzz minimized the input further and wrote another.
func fuzzReplayCommand(t testing.TB, in explore.Input) string {
	name := t.Name()
	if corpusEntry(name) != "" {
		return runCommand(name)
	}
	id, data := in.CorpusFile()
	name += "/" + id
	return fmt.Sprintf("%s (the input, as testdata/fuzz/%s holds it:\n%s)", runCommand(name), name, indent(string(data)))
}

// runCommand is the go test command that runs the test named name alone:
// testrun.ReplayCommand without the seed flag, which a corpus entry does
// not need.
func runCommand(name string) string {
	cmd, _ := strings.CutSuffix(testrun.ReplayCommand(named(name), 0), " -"+testrun.SeedFlag+"=0")
	return cmd
}

// named is a test name, for testrun.ReplayCommand.
type named string

func (n named) Name() string { return string(n) }

// indent indents each line of s by four spaces.
func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ")
}
