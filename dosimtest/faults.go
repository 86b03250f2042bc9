package dosimtest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/testrun"
	"github.com/dosim/dosim/transport"
)

// FaultsFlag is the flag, without its dash, that makes Func replay one
// seed with exactly the faults it names (explore.FaultSetText's form,
// CALL:ATTEMPT:METHOD=FAULT,..., or none): how a failure found by an
// exhaustive search (Options.Exhaustive) replays, since its placement is
// not what the seed draws. It falls back on DOSIM_FAULTS, and needs
// -dosim.seed (or DOSIM_SEED).
const FaultsFlag = "dosim.faults"

var faultsFlag = flag.String(FaultsFlag, "", "with -dosim.seed: dosimtest.Func runs that seed with exactly these faults, as CALL:ATTEMPT:METHOD=FAULT,... (or none), as it prints them for a failure of an exhaustive search (default: $DOSIM_FAULTS)")

// replayFaults returns the fault set -dosim.faults (else DOSIM_FAULTS)
// names and true, or false when neither is set.
func replayFaults() ([]transport.Rule, bool, error) {
	for _, src := range []struct{ name, v string }{{"-" + FaultsFlag, *faultsFlag}, {"DOSIM_FAULTS", os.Getenv("DOSIM_FAULTS")}} {
		if src.v == "" {
			continue
		}
		rules, err := explore.ParseFaultSet(src.v)
		if err != nil {
			return nil, false, fmt.Errorf("%s=%q: %w", src.name, src.v, err)
		}
		return rules, true, nil
	}
	return nil, false, nil
}

// faultsReplay runs seed with exactly rules (-dosim.faults): one run, no
// sweep and no shrinking. A violation fails t with the run's violations,
// timeline, replay command and artifacts. The summary is of the one run;
// as for one fuzz input, the share of histories checked (rule C3) is not
// judged.
func faultsReplay(t testing.TB, fe *explore.FuncExplorer, seed uint64, rules []transport.Rule) *explore.Summary {
	f := &explore.Failing{Seed: seed, Faults: rules, Shrunk: rules, Run: explore.RunShrunk}
	run := fe.Rerun(f)
	if err := run.FaultsStruck(); err != nil {
		t.Fatalf("dosimtest.Func: -%s: %v", FaultsFlag, err)
		return nil
	}
	f.Violations = run.Violations()
	o := fe.Options()
	sum := &explore.Summary{Scenario: "explore.Func", First: seed, Seeds: 1, Latency: o.Latency, MaxAmbiguous: o.MaxAmbiguous,
		NoLinearizability: o.NoLinearizability, Shards: []explore.Shard{{Index: 0, Count: 1}}, Complete: true, Ran: 1,
		Violations: f.Violations, Total: len(f.Violations)}
	if len(f.Violations) == 0 {
		t.Logf("%s: seed %d with the faults %s only: no violation", t.Name(), seed, faultSetText(rules))
		return sum
	}
	sum.Failed, sum.FirstFailing = 1, f
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d violation(s) in seed %d with the faults -%s gave only (%s):\n%s",
		t.Name(), len(f.Violations), seed, FaultsFlag, faultSetText(rules), explore.FaultsYAML(rules))
	writeRun(&b, t, f, run, faultsReplayCommand(t, seed, rules), true)
	t.Errorf("%s", b.String())
	return sum
}

// exhaustiveFailure is the report of an exhaustive search's failure: its
// bounds, the first failing placement shrunk, the violations of its
// replay, and the command that replays it by its faults.
func exhaustiveFailure(t testing.TB, fe *explore.FuncExplorer, sum *explore.Summary, replay bool) string {
	var b strings.Builder
	c, f := sum.Exhaustive, sum.FirstFailing
	fmt.Fprintf(&b, "%s: the exhaustive search (up to %d fault(s) of %s at every decision point, seed %d) failed: %d violation(s) in its first failing placement, after %d runs.\n",
		t.Name(), c.MaxFaults, strings.Join(c.Kinds, ", "), f.Seed, sum.Total, c.Runs)
	switch {
	case f.Shrink == explore.ShrinkDone && len(f.Shrunk) == len(f.Faults):
		fmt.Fprintf(&b, "faults placed %d, none of which can be dropped (%d replays):\n", len(f.Faults), f.Replays)
	default:
		fmt.Fprintf(&b, "faults placed %d, shrunk (%s, %d replays) to %d:\n", len(f.Faults), f.Shrink, f.Replays, len(f.Shrunk))
	}
	b.WriteString(explore.FaultsYAML(f.Shrunk))
	writeRun(&b, t, f, fe.Rerun(f), faultsReplayCommand(t, f.Seed, f.Shrunk), replay)
	return b.String()
}

// writeRun writes what the report of one failing run ends with: its
// violations (rule C5: the run is named), the replay command, its
// timeline when asked, and where its artifacts went.
func writeRun(b *strings.Builder, t testing.TB, f *explore.Failing, run *explore.FuncRun, cmd string, timeline bool) {
	fmt.Fprintf(b, "%s violates:\n", f.RunText())
	for _, v := range f.Violations {
		fmt.Fprintf(b, "  %s\n", v)
	}
	fmt.Fprintf(b, "replay: %s\n", cmd)
	if timeline {
		var tl bytes.Buffer
		if err := run.WriteTimeline(&tl); err == nil {
			fmt.Fprintf(b, "timeline of %s:\n%s", f.RunText(), tl.String())
		}
	}
	if dir, err := testrun.ArtifactsDir(t.Name(), f.Seed); err == nil {
		if err := run.WriteArtifacts(filepath.Join(dir, "explore"), cmd); err == nil {
			fmt.Fprintf(b, "artifacts in %s", filepath.Join(dir, "explore"))
		}
	}
}

// faultSetText is rules as -dosim.faults reads them: none for no fault.
func faultSetText(rules []transport.Rule) string {
	if len(rules) == 0 {
		return "none"
	}
	return explore.FaultSetText(rules)
}

// faultsReplayCommand is the go test command that runs t alone with seed
// and exactly the faults rules: testrun.ReplayCommand's, with -dosim.faults.
func faultsReplayCommand(t testing.TB, seed uint64, rules []transport.Rule) string {
	set := faultSetText(rules)
	if strings.ContainsFunc(set, func(r rune) bool { return !strings.ContainsRune(safeChars, r) }) {
		set = "'" + strings.ReplaceAll(set, "'", `'\''`) + "'"
	}
	return fmt.Sprintf("%s -%s=%s", testrun.ReplayCommand(t, seed), FaultsFlag, set)
}

// safeChars need no quoting in a shell word.
const safeChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:=,.-/+"
