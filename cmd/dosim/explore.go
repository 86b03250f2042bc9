package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
	"github.com/spf13/cobra"
)

// exploreProgressMin is the number of seeds from which explore shows a
// progress bar on a terminal.
const exploreProgressMin = 2000

func newExplore() *cobra.Command {
	var (
		seeds, workers, maxAmbiguous int
		first, replay                uint64
		shard, rates, jsonOut, arts  string
		keepRules, noShrink          bool
		shrinkTime                   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "explore FILE",
		Short: "Search a scenario's fault space for the seed where an object breaks",
		Long: `Run a scenario once per seed with faults drawn at random for every attempt (from
the seed, so each seed replays exactly) and check each run: the S-rule
invariants (an unmarked method runs at most once per call, at most MaxRetries+1
attempts, no retry at or after the deadline, the first attempt never cancelled,
one subrequest per call), the scenario's explore.expect expectations, and that
each object's history is linearizable against the class itself run one call at
a time (a call that failed ambiguously may or may not have taken effect). The
history of an object whose alarms, schedules or queues ran is not checked, and
is counted apart: that background work runs after the calls return, which the
one-call-at-a-time model cannot place.

The lowest failing seed is shrunk to the fewest faults that still fail it (for
at most --shrink-time; progress goes to standard error), and printed with the
command that replays it; if its faults replayed as explicit rules do not fail,
it says so and only the seed replays it. --artifacts writes the timeline,
porcupine's visualisation of the history and the shrunk faults.

--shard I/N runs every N-th seed starting at the I-th, so that N machines (a CI
matrix, a Kubernetes indexed job) can share one sweep; each writes --json and
"dosim explore merge" combines them.

Rates come from --rates, else the scenario's explore.random, else 0.04 for every
fault. Exit code 1 means a violation was found.` + exploreExitCodesHelp,
		Example: `  dosim explore testdata/scenarios/ambiguous-delivery.yaml --seeds 10000
  dosim explore testdata/scenarios/ledger-transfers.yaml --seeds 100000 --workers 2
  dosim explore FILE --seeds 100000 --shard 0/4 --json shard-0.json
  dosim explore merge shard-*.json
  dosim explore FILE --replay 123 --rates lose-response=0.1 --artifacts out/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := scenario.Load(args[0])
			if err != nil {
				return &codeError{code: exitUsage, msg: err.Error()}
			}
			opts := explore.Options{First: first, Seeds: seeds, Workers: workers, MaxAmbiguous: maxAmbiguous,
				KeepRules: keepRules, NoShrink: noShrink, ShrinkTime: shrinkTime}
			if shrinkTime <= 0 {
				return usageErrorf("--shrink-time %v: want a positive duration, such as 60s (--no-shrink turns shrinking off)", shrinkTime)
			}
			if rates != "" {
				if opts.Rates, err = parseRates(rates); err != nil {
					return err
				}
			}
			if shard != "" {
				if opts.Shard, err = explore.ParseShard(shard); err != nil {
					return usageErrorf("--shard: %v", err)
				}
			}
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			shrinking := newShrinkLine(errw)
			opts.ShrinkProgress = shrinking.update
			if cmd.Flags().Changed("replay") {
				return replaySeed(out, sc, opts, replay, arts, shrinking)
			}
			n := opts.Seeds
			if n == 0 {
				n = 1000
			}
			var bar *progressBar
			if n >= exploreProgressMin && isTerminal(errw) {
				bar = &progressBar{w: errw}
				total := n
				if opts.Shard.Count > 1 {
					total = (n - opts.Shard.Index + opts.Shard.Count - 1) / opts.Shard.Count
				}
				opts.Progress = func(done int) { bar.update(done, total) }
			}
			e, err := explore.New(sc, opts)
			if err != nil {
				return usageErrorf("%v", err)
			}
			sum, err := e.Sweep()
			if bar != nil {
				bar.done()
			}
			shrinking.done()
			if err != nil {
				return &codeError{code: exitInternal, msg: "dosim: " + err.Error()}
			}
			if jsonOut != "" {
				if err := writeJSON(jsonOut, out, sum); err != nil {
					return err
				}
			}
			if jsonOut != "-" {
				writeSummary(out, sum)
			}
			if sum.FirstFailing != nil && arts != "" {
				files, err := e.WriteArtifacts(arts, sum.FirstFailing)
				if err != nil {
					return &codeError{code: exitInternal, msg: "dosim: writing artifacts: " + err.Error()}
				}
				fmt.Fprintf(errw, "artifacts: %s\n", strings.Join(files, ", "))
			}
			if !sum.Clean() {
				return &codeError{code: exitExpect}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&seeds, "seeds", 1000, "how many seeds to explore")
	f.Uint64Var(&first, "first", 1, "the first seed")
	f.IntVar(&workers, "workers", 1, "seeds checked in parallel")
	f.StringVar(&shard, "shard", "", "run one shard I/N of the sweep (every N-th seed from the I-th)")
	f.StringVar(&rates, "rates", "", "fault rates, as FAULT=RATE,... (default: the scenario's explore.random, else 0.04 each)")
	f.BoolVar(&keepRules, "keep-rules", false, "keep the scenario's own fault rules under the random faults")
	f.IntVar(&maxAmbiguous, "max-ambiguous", explore.DefaultMaxAmbiguous, "skip the linearizability check of histories with more ambiguous calls")
	f.BoolVar(&noShrink, "no-shrink", false, "keep the first failing seed's faults as drawn")
	f.DurationVar(&shrinkTime, "shrink-time", explore.DefaultShrinkTime, "stop shrinking after this long and keep the smallest failing fault set found so far")
	f.StringVar(&jsonOut, "json", "", "write the summary as JSON to this file (- for stdout), for explore merge")
	f.StringVar(&arts, "artifacts", "", "write the first failing seed's artifacts to this folder")
	f.Uint64Var(&replay, "replay", 0, "run only this seed and show its timeline and violations")
	cmd.AddCommand(newExploreMerge())
	return cmd
}

// shrinkLine reports shrinking on stderr: on a terminal one line kept up
// to date after each replay (cleared by done), elsewhere a line each time
// the failing fault set gets smaller.
type shrinkLine struct {
	w    io.Writer
	term bool
	last int
	on   bool
}

func newShrinkLine(w io.Writer) *shrinkLine { return &shrinkLine{w: w, term: isTerminal(w), last: -1} }

func (s *shrinkLine) update(replays, faults int) {
	switch {
	case s.term:
		fmt.Fprintf(s.w, "\r  shrinking: %d replays, smallest failing fault set %d   ", replays, faults)
	case faults != s.last:
		fmt.Fprintf(s.w, "shrinking: %d replays, smallest failing fault set %d\n", replays, faults)
	}
	s.on, s.last = true, faults
}

// done clears the terminal line.
func (s *shrinkLine) done() {
	if s.term && s.on {
		fmt.Fprintf(s.w, "\r%s\r", strings.Repeat(" ", 72))
	}
	s.on = false
}

// parseRates reads FAULT=RATE,FAULT=RATE.
func parseRates(v string) (transport.Rates, error) {
	out := transport.Rates{}
	for _, part := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, usageErrorf("--rates: %q: want FAULT=RATE, such as lose-response=0.1", part)
		}
		f, err := transport.ParseFault(name)
		if err != nil || f == transport.None {
			return nil, usageErrorf("--rates: unknown fault %q; allowed are %s", name, faultList())
		}
		r, err := strconv.ParseFloat(val, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, usageErrorf("--rates: %s=%s: want a rate, a number from 0 to 1", name, val)
		}
		out[f] = r
	}
	if err := transport.Random(out).Validate(); err != nil {
		return nil, usageErrorf("--rates: %v", err)
	}
	return out, nil
}

func faultList() string {
	var names []string
	for _, f := range transport.Faults() {
		names = append(names, f.String())
	}
	return strings.Join(names, ", ")
}

func writeJSON(path string, stdout io.Writer, sum *explore.Summary) error {
	if path == "-" {
		return sum.WriteJSON(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return usageErrorf("--json: %v", err)
	}
	if err := sum.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeSummary prints a sweep's report for a person.
func writeSummary(w io.Writer, sum *explore.Summary) {
	fmt.Fprintf(w, "explore %s (%s)\n", sum.Scenario, sum.File)
	shards := ""
	if len(sum.Shards) == 1 && sum.Shards[0].Count > 1 {
		shards = ", shard " + sum.Shards[0].String()
	} else if len(sum.Shards) > 1 {
		shards = fmt.Sprintf(", %d shards merged", len(sum.Shards))
	}
	fmt.Fprintf(w, "seeds %d..%d%s, rates %s\n", sum.First, sum.First+uint64(sum.Seeds)-1, shards, explore.RatesText(sum.Rates))
	fmt.Fprintf(w, "%d seeds run, %d object histories checked for linearizability", sum.Ran, sum.Histories)
	if sum.Skipped > 0 {
		fmt.Fprintf(w, " (%d skipped: too many ambiguous calls)", sum.Skipped)
	}
	fmt.Fprintln(w)
	if sum.Background > 0 {
		fmt.Fprintf(w, "%d object histories not checked for linearizability: %s\n", sum.Background, explore.ReasonBackground)
	}
	if missing := sum.Missing(); len(missing) > 0 {
		names := make([]string, len(missing))
		for i, m := range missing {
			names[i] = m.String()
		}
		fmt.Fprintf(w, "missing shards: %s\n", strings.Join(names, ", "))
	}
	if sum.Clean() {
		fmt.Fprintln(w, "clean: no violation")
		return
	}
	fmt.Fprintf(w, "\n%d violation(s) in %d seed(s):\n", sum.Total, sum.Failed)
	for i, v := range sum.Violations {
		if i == 10 {
			fmt.Fprintf(w, "  ... and %d more\n", sum.Total-10)
			break
		}
		fmt.Fprintf(w, "  %s\n", v)
	}
	if f := sum.FirstFailing; f != nil {
		fmt.Fprintf(w, "\nfirst failing seed %d: %s\n", f.Seed, shrinkText(f))
		if f.Shrink != explore.ShrinkNotReproduced {
			for _, line := range strings.Split(strings.TrimRight(explore.FaultsYAML(f.Shrunk), "\n"), "\n") {
				fmt.Fprintf(w, "  %s\n", line)
			}
		}
		fmt.Fprintf(w, "replay: %s\n", sum.ReplayCommand(f.Seed))
	}
}

// shrinkText says what shrinking did to a failing seed's faults.
func shrinkText(f *explore.Failing) string {
	drawn := fmt.Sprintf("%d fault(s) drawn", len(f.Faults))
	switch f.Shrink {
	case explore.ShrinkNotReproduced:
		return drawn + ", not shrunk: replayed as explicit rules they did not reproduce the failure (the run took another course without the random draws); the seed itself replays it:"
	case explore.ShrinkBudget:
		return fmt.Sprintf("%s, shrinking stopped when --shrink-time ran out, after %d replays; the smallest failing set found so far has %d:", drawn, f.Replays, len(f.Shrunk))
	case explore.ShrinkOff:
		return drawn + " (not shrunk: --no-shrink):"
	}
	if len(f.Shrunk) == 0 && len(f.Faults) > 0 {
		return drawn + ", shrunk to 0: it fails with no fault at all:"
	}
	return fmt.Sprintf("%s, shrunk to %d:", drawn, len(f.Shrunk))
}

// replaySeed runs one seed and shows its timeline and violations.
func replaySeed(w io.Writer, sc *scenario.Scenario, opts explore.Options, seed uint64, arts string, shrinking *shrinkLine) error {
	e, err := explore.New(sc, opts)
	if err != nil {
		return usageErrorf("%v", err)
	}
	r, err := e.Replay(seed)
	if err != nil {
		return &codeError{code: exitInternal, msg: "dosim: " + err.Error()}
	}
	if r.Result != nil {
		rep := r.Result.Report()
		rep.Name = fmt.Sprintf("%s, explore seed %d", rep.Name, seed)
		rep.Failures, rep.Expectations = nil, 0 // the file's expectations are for its own faults
		if err := render.Text(w, rep, render.TextOptions{}); err != nil {
			return err
		}
	}
	if len(r.Violations) == 0 {
		fmt.Fprintf(w, "\nseed %d: no violation\n", seed)
		return nil
	}
	fmt.Fprintf(w, "\nseed %d violates:\n", seed)
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  %s\n", v)
	}
	if arts != "" {
		f, err := e.Failing(seed)
		shrinking.done()
		if err != nil {
			return &codeError{code: exitInternal, msg: "dosim: " + err.Error()}
		}
		files, err := e.WriteArtifacts(filepath.Clean(arts), f)
		if err != nil {
			return &codeError{code: exitInternal, msg: "dosim: writing artifacts: " + err.Error()}
		}
		fmt.Fprintf(w, "artifacts: %s\n", strings.Join(files, ", "))
	}
	return &codeError{code: exitExpect}
}

func newExploreMerge() *cobra.Command {
	var (
		jsonOut string
		partial bool
	)
	cmd := &cobra.Command{
		Use:   "merge SUMMARY.json...",
		Short: "Combine the JSON summaries of the shards of one sweep",
		Long: `Combine the --json summaries written by the shards of one sweep (the same
scenario, seeds and rates, each shard once) into one report. Missing shards are
named, and make the merge fail unless --partial. Exit code 1 means a shard
found a violation.` + mergeExitCodesHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			var parts []*explore.Summary
			for _, name := range files {
				f, err := os.Open(name)
				if err != nil {
					return usageErrorf("%v", err)
				}
				s, err := explore.ReadSummary(f)
				f.Close()
				if err != nil {
					return usageErrorf("%s: %v", name, err)
				}
				parts = append(parts, s)
			}
			sum, err := explore.Merge(parts...)
			if err != nil {
				return usageErrorf("%v", err)
			}
			out := cmd.OutOrStdout()
			if jsonOut != "" {
				if err := writeJSON(jsonOut, out, sum); err != nil {
					return err
				}
			}
			if jsonOut != "-" {
				writeSummary(out, sum)
			}
			if !sum.Clean() {
				return &codeError{code: exitExpect}
			}
			if missing := sum.Missing(); len(missing) > 0 && !partial {
				return usageErrorf("%d of %d shards missing: the sweep is incomplete (--partial accepts it)", len(missing), missing[0].Count)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the merged summary as JSON to this file (- for stdout)")
	cmd.Flags().BoolVar(&partial, "partial", false, "accept a merge that lacks some shards")
	return cmd
}
