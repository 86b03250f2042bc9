package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/optrange"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/transport"
	"github.com/spf13/pflag"
)

// exhaustiveFlags are explore's flags of an exhaustive search and of the
// replay of an explicit fault set.
type exhaustiveFlags struct {
	on                 bool
	maxFaults, maxRuns int
	replayFaults       string
	rules              []transport.Rule // --replay-faults, read; nil without it
}

func (x *exhaustiveFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&x.on, "exhaustive", false, "run every placement of up to --max-faults faults (each kind the rates name) over the run's delivery decision points, from the fault-free run of seed --first, and print a certificate or the first failing placement")
	f.IntVar(&x.maxFaults, "max-faults", explore.DefaultMaxFaults, "with --exhaustive: the most faults a placement holds: "+optrange.MaxFaults.Want)
	f.IntVar(&x.maxRuns, "max-runs", explore.DefaultMaxRuns, "with --exhaustive: the most runs the search may make, "+optrange.MaxRuns.Want+"; a larger tree is refused")
	f.StringVar(&x.replayFaults, "replay-faults", "", "with --replay: run the seed with exactly these faults, as CALL:ATTEMPT:METHOD=FAULT,... (or none), as an exhaustive search prints them")
}

// replayOptions reads --replay-faults, and refuses what does not go with
// --replay: a replay runs one seed, not a search.
func (fl *exploreCmd) replayOptions() error {
	x, given := &fl.exh, fl.given
	if given("replay-faults") {
		if !fl.isReplay {
			return usageErrorf("--replay-faults needs --replay SEED: the seed whose run the faults replace")
		}
		rules, err := explore.ParseFaultSet(x.replayFaults)
		if err != nil {
			return usageErrorf("--replay-faults: %w", err)
		}
		x.rules = rules
	}
	if !fl.isReplay {
		return nil
	}
	for _, name := range []string{"exhaustive", "max-faults", "max-runs"} {
		if given(name) && (name != "exhaustive" || x.on) {
			return usageErrorf("--replay runs one seed: --%s, which makes a search of placements, does not go with it (--replay-faults replays one placement)", name)
		}
	}
	fl.opts.Seeds = 1 // one seed, whatever the file's search
	return nil
}

// runExhaustive is explore --exhaustive: the search, its report, and the
// first failing placement's artifacts.
func (fl *exploreCmd) runExhaustive(w env, e *explore.Explorer, shrinking *shrinkLine) error {
	ctx, stop := interruptible(w.ctx)
	defer stop()
	sum, err := e.SweepContext(ctx)
	shrinking.done()
	switch {
	case errors.Is(err, explore.ErrOptions):
		return usageErrorf("%w", err)
	case err != nil:
		return internalError("", err)
	}
	if fl.js.path != "" {
		if err := fl.js.write(w.out, sum.WriteJSON); err != nil {
			return err
		}
	}
	if fl.js.path != "-" {
		fl.a.writeExhaustive(w.out, sum)
	}
	if !sum.Complete {
		return &codeError{code: interruptCode(ctx), named: true, msg: "interrupted: the exhaustive search did not run every placement; no certificate"}
	}
	if sum.FirstFailing != nil && fl.arts != "" {
		files, err := e.WriteArtifacts(fl.arts, sum.FirstFailing)
		if err != nil {
			return artifactsError(fl.arts, err, sum.Total)
		}
		fmt.Fprintf(w.errw, "artifacts: %s\n", strings.Join(files, ", "))
	}
	if sum.Total > 0 || !sum.CheckedEnough() {
		return &codeError{code: exitExpect}
	}
	return nil
}

// writeExhaustive prints an exhaustive search's report: what it placed,
// what it checked, and its certificate or its first failing placement.
func (a *app) writeExhaustive(w io.Writer, sum *explore.Summary) {
	c := sum.Exhaustive
	fmt.Fprintf(w, "explore %s (%s)\n", render.Escape(sum.Scenario), render.Escape(sum.File))
	fmt.Fprintf(w, "exhaustive: up to %d fault(s) of %s at every decision point, seed %d, latency %s\n", c.MaxFaults, strings.Join(c.Kinds, ", "), sum.First, sum.Latency)
	var b bytes.Buffer
	sum.WriteChecked(&b)
	checked := strings.Replace(b.String(), fmt.Sprintf("%d seeds run", sum.Ran), fmt.Sprintf("%d runs", c.Runs), 1)
	io.WriteString(w, checked)
	f := sum.FirstFailing
	switch {
	case !sum.Complete:
		fmt.Fprintf(w, "INTERRUPTED: %d placements ran before the search stopped; no certificate\n", c.Runs)
		return
	case f == nil && !sum.CheckedEnough():
		fmt.Fprintf(w, "%s\n%s (--min-checked)\n", c.Text("no violation"), sum.NotCheckedEnough())
		return
	case f == nil:
		fmt.Fprintln(w, c.Text("clean"))
		if c.Duplicates > 0 {
			fmt.Fprintf(w, "  (and %d runs of fault sets in which a fault met no attempt, each the same run as a smaller placement: not counted)\n", c.Duplicates)
		}
		return
	}
	fmt.Fprintf(w, "\nfirst failing placement, after %d runs: %d fault(s), %s\n", c.Runs, len(f.Faults), exhaustiveShrinkText(f))
	for _, line := range strings.Split(strings.TrimRight(explore.FaultsYAML(f.Shrunk), "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", render.Escape(line))
	}
	fmt.Fprintf(w, "%s violates:\n", f.RunText())
	for _, v := range f.Violations {
		fmt.Fprintf(w, "  %s\n", render.Escape(v.String()))
	}
	fmt.Fprintf(w, "replay: %s\n", a.replayCommand(sum, f.Seed))
}

// exhaustiveShrinkText says what shrinking did to a failing placement.
func exhaustiveShrinkText(f *explore.Failing) string {
	switch f.Shrink {
	case explore.ShrinkOff:
		return "not shrunk (--no-shrink):"
	case explore.ShrinkDone:
		if len(f.Shrunk) == len(f.Faults) {
			return "none of which can be dropped:"
		}
	}
	return fmt.Sprintf("shrunk (%s) to %d:", f.Shrink, len(f.Shrunk))
}

// replayRun runs seed with rules (--replay-faults), or with its random
// faults when rules is nil.
func replayRun(e *explore.Explorer, seed uint64, rules []transport.Rule) (*explore.SeedResult, error) {
	if rules != nil {
		return e.ReplayFaults(seed, rules)
	}
	return e.Replay(seed)
}

// replayFailing is the failing run replayRun made, shrunk, for artifacts.
func replayFailing(e *explore.Explorer, seed uint64, rules []transport.Rule) (*explore.Failing, error) {
	if rules != nil {
		return e.ReplayFaultsFailing(seed, rules)
	}
	return e.Failing(seed)
}
