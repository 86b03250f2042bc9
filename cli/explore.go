package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/optrange"
	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
	"github.com/spf13/cobra"
)

// exploreProgressMin is the number of seeds from which explore shows its
// progress: a bar on a terminal, else a line every progressEvery.
const exploreProgressMin = 2000

// exploreCmd is dosim explore's options: its flags, and what validate
// made of them.
type exploreCmd struct {
	a                            *app
	seeds, workers, maxAmbiguous int
	first, replay                uint64
	shard, rates, jsonOut, arts  string
	latency                      string
	keepRules, noShrink, swarm   bool
	shrinkTime                   time.Duration
	horizon                      horizonValue
	noLinear                     bool
	minChecked                   float64
	checkDet, recurring          bool
	failFast                     bool
	interleave                   []string
	exh                          exhaustiveFlags
	sched                        strategyFlags // --strategy, --depth

	file     string
	given    func(flag string) bool
	sc       *scenario.Scenario // the file, loaded
	opts     explore.Options    // the explorer's options, but the progress callbacks
	js       outputFile         // --json, checked
	isReplay bool               // --replay was given: one seed, not a sweep
	// overrides say which of the file's explore fields a flag replaced.
	overrides []string
}

func (a *app) newExplore() *cobra.Command {
	fl := &exploreCmd{a: a}
	cmd := &cobra.Command{
		Use:   "explore FILE",
		Short: "Search a scenario's fault space for the seed where an object breaks",
		Long:  a.exploreLong(),
		Example: a.example(`  dosim explore testdata/scenarios/ambiguous-delivery.yaml --seeds 10000
  dosim explore testdata/scenarios/ledger-transfers.yaml --seeds 100000 --workers 2
  dosim explore FILE --seeds 100000 --shard 0/4 --json shard-0.json
  dosim explore merge shard-*.json
  dosim explore FILE --replay 123 --rates lose-response=0.1 --artifacts out/`, `  dosim explore FILE --seeds 10000
  dosim explore FILE --seeds 100000 --workers 2
  dosim explore FILE --seeds 100000 --shard 0/4 --json shard-0.json
  dosim explore merge shard-*.json
  dosim explore FILE --replay 123 --rates lose-response=0.1 --artifacts out/`),
		Args: cobra.ExactArgs(1),
		RunE: runE(fl),
	}
	f := cmd.Flags()
	f.Var(&fl.horizon, "horizon", "how long in virtual time a run may take, and its background work may go on after it, to find what never settles: "+optrange.Horizon.Want+" (default: the scenario's explore.horizon, else "+explore.DefaultHorizon.String()+")")
	f.BoolVar(&fl.noLinear, "no-linearizability", false, "skip the linearizability check of the objects' histories (the other checks still run)")
	f.BoolVar(&fl.recurring, "recurring-alarms", false, "alarms that re-arm for ever are intended (a heartbeat): do not report them")
	f.StringSliceVar(&fl.interleave, "interleaving", nil, "turns meant to interleave at their awaits, as Method, NAMESPACE.Method, fetch, alarm, schedule or queue (comma-separated, or the flag again): a history only their interleaving as it ran explains is no violation; your expectations judge it")
	f.BoolVar(&fl.checkDet, "check-determinism", false, "run each failing seed, and every 64th other one, twice and report a difference (object code reading the wall clock, map order)")
	f.Float64Var(&fl.minChecked, "min-checked", explore.DefaultMinChecked, "the least share of object histories a sweep must check to be clean, below which it exits 1: "+optrange.MinCheckedWant)
	f.IntVar(&fl.seeds, "seeds", 1000, "how many seeds to explore: "+optrange.Seeds.Want+" (a range, never listed, so any size runs in flat memory)")
	f.Uint64Var(&fl.first, "first", 1, "the first seed (0 is seed 0); first+seeds-1 must fit a uint64")
	f.IntVar(&fl.workers, "workers", explore.DefaultWorkers(), "seeds checked in parallel: "+optrange.Workers.Want+" (default: the number of CPUs)")
	f.StringVar(&fl.shard, "shard", "", "run one shard I/N of the sweep (every N-th seed from the I-th)")
	f.StringVar(&fl.rates, "rates", "", "fault rates, as FAULT=RATE,... (default: the scenario's explore.random, else every fault kind at 0.04, reset and storage-write-fails at 0.01)")
	f.BoolVar(&fl.keepRules, "keep-rules", false, "keep the scenario's own fault rules under the random faults")
	f.StringVar(&fl.latency, "latency", "", "link latency of every attempt and reply, as p50=5ms,p99=200ms, or off (default: the scenario's explore.latency, else "+explore.DefaultLatency.String()+")")
	f.BoolVar(&fl.swarm, "swarm", false, "draw each seed's own fault profile (which kinds of the rates are on, and their rates) from the seed")
	fl.sched.register(f)
	f.IntVar(&fl.maxAmbiguous, "max-ambiguous", explore.DefaultMaxAmbiguous, "skip the linearizability check of histories with more turns cut short (by a reset, a lost write or a cancellation: each may or may not have taken effect): "+optrange.MaxAmbiguous.Want)
	f.BoolVar(&fl.failFast, "failfast", false, "stop the sweep at its first failing seed: seeds already running finish, so the lowest failing seed is still the one reported, and shrunk")
	f.BoolVar(&fl.noShrink, "no-shrink", false, "keep the first failing seed's faults as drawn")
	f.DurationVar(&fl.shrinkTime, "shrink-time", explore.DefaultShrinkTime, "stop shrinking after this long and keep the smallest failing fault set found so far: "+optrange.ShrinkTime.Want)
	f.StringVar(&fl.jsonOut, "json", "", "write the summary as JSON to this file (- for stdout), for explore merge: checked before the sweep, written whole at its end; never the scenario file or an artifact")
	f.StringVar(&fl.arts, "artifacts", "", "write the first failing seed's artifacts to this folder (created, and checked writable, before the sweep)")
	f.Uint64Var(&fl.replay, "replay", 0, "run only this seed and show its timeline and violations")
	fl.exh.register(f)
	cmd.AddCommand(a.newExploreMerge())
	return cmd
}

// exploreLong is explore's help text.
func (a *app) exploreLong() string {
	return `Run a scenario once per seed with faults drawn at random for every attempt (from
the seed, so each seed replays exactly) and check each run: the S-rule
invariants (an unmarked method runs at most once per call, at most MaxRetries+1
attempts, no retry at or after the deadline, the first attempt never cancelled,
one subrequest per call), the scenario's explore.expect expectations, and that
each object's history is linearizable against the class itself run one
operation at a time. An object's history is every turn it ran: its calls and
its own background work (alarm deliveries, runs of its scheduled and queued
tasks, after the steps too); each is replayed at the instant it ran, on the
instance the turns before it left, with the clock readings, seeded draws and
answers of calls out it read then, so a class that stores the time, or keeps
state in fields, is judged by what it could have computed. A turn cut short (a
reset, a lost write) may or may not have taken effect. A history that only
turns interleaved at an await explain (a turn awaited a call or a sleep, and
another request ran meanwhile) is a violation of kind interleaving, unless
--interleaving (or explore.interleaving) declares the waiting turn meant to.

After the run, the objects' background work (alarms, schedules, queues) goes on
to a horizon of virtual time (--horizon, default ` + explore.DefaultHorizon.String() + `; the run itself must end
within it too), and what never settles is a violation: a queue that never
drains, an alarm that keeps re-arming (--recurring-alarms allows a heartbeat)
or is retried for ever, schedule rows that keep growing. --check-determinism
runs each failing seed, and every 64th other one, twice and reports any
difference (object code that reads the wall clock or a map's order).

The report says what was checked: the object histories checked and not (with
the reason), the faults that fired by method and stage, and the rule paths the
runs took. It says "clean" only when it checked at least --min-checked of the
object histories (default ` + fmt.Sprint(explore.DefaultMinChecked) + `); below that a sweep with no violation
exits 1 all the same.

The lowest failing seed is shrunk to the fewest faults that still fail it (for
at most --shrink-time; progress goes to standard error), and printed with the
command that replays it; if its faults replayed as explicit rules do not fail,
it says so and only the seed replays it. --artifacts writes the timeline (text,
HTML and a chrome-trace, trace.json, for Perfetto),
porcupine's visualisation of the history and the shrunk faults.

--shard I/N runs every N-th seed starting at the I-th, so that N machines (a CI
matrix, a Kubernetes indexed job) can share one sweep; each writes --json and
"` + a.name + ` explore merge" combines them.

Rates come from --rates, else the scenario's explore.random, else every fault
kind: 0.04 each, reset and storage-write-fails (crash windows) 0.01.

Each seed runs one strategy (--strategy, else the scenario's explore.strategy,
else mix). mix draws it from a hash of the seed: random (the rates, the latency,
a seeded tie-break) for 40% of the seeds, swarm (the seed's own fault profile)
for 40%, pct (no latency, at a depth of 2 to 5 drawn from the seed, or --depth)
for 20%; a failing seed's report says which,
and its replay line carries that strategy's flags. random and pct run every seed
so; pct runs without latency unless --latency is given.

Seeds run from --first (0 is seed 0) for --seeds seeds (at least 1); the range
is never listed, so memory stays flat however many seeds run. --workers is 1 to
256, by default the number of CPUs (at most 256); the result does not depend on
it. --json and --artifacts are checked before the sweep starts. From ` + fmt.Sprint(exploreProgressMin) + ` seeds,
progress goes to stderr: a bar on a terminal, else a line every ` + progressEvery.String() + ` (seeds done,
seeds per second, violations so far).

SIGINT or SIGTERM stops the sweep: the seeds that ran are summarised and marked
INTERRUPTED, --json is written with "complete": false (merge refuses it unless
--allow-incomplete), and ` + a.name + ` exits 130 (143 for SIGTERM). A signal once every seed
ran stops shrinking the first failing seed: the summary keeps the smallest
failing set found so far, says so, and ` + a.name + ` exits 130 (143) all the same. A
second signal ends it at once. Exit code 1 means a violation was found.

--replay N runs seed N alone and shows its timeline and violations; the flags
of a sweep (--json, --shard, --seeds, --first, --workers, --min-checked,
--check-determinism) are refused with it, not ignored, as are --no-shrink and
--shrink-time without --artifacts (it shrinks only to write them).` + exploreExitCodesHelp
}

func (fl *exploreCmd) bind(args []string, given func(string) bool) {
	fl.file, fl.given, fl.isReplay = args[0], given, given("replay")
}

// validate loads the scenario, checks the flags, and checks the files
// explore writes, before anything runs.
func (fl *exploreCmd) validate() error {
	var err error
	if fl.sc, err = fl.a.loadScenario(fl.file); err != nil {
		return &codeError{code: exitUsage, msg: err.Error()}
	}
	if fl.opts, err = fl.options(); err != nil {
		return err
	}
	fl.opts.StallLimit = fl.a.stallOption()
	if fl.isReplay {
		if err := sweepOnly(fl.given); err != nil {
			return err
		}
	}
	if err := fl.replayOptions(); err != nil {
		return err
	}
	if fl.overrides, err = fl.checkOptions(); err != nil {
		return err
	}
	fl.js, err = fl.checkFiles(fl.file)
	return err
}

// checkFiles checks, before the sweep, the files explore writes: the
// artifacts' folder (created) and the --json file, neither of which may
// replace the scenario file, nor --json an artifact.
func (fl *exploreCmd) checkFiles(file string) (outputFile, error) {
	js := outputFile{flag: "--json", path: fl.jsonOut, inputs: []string{file}, artifacts: fl.arts}
	if fl.arts != "" {
		if err := checkFolder(fl.arts, file); err != nil {
			return js, err
		}
	}
	if fl.jsonOut != "" {
		return js, js.check()
	}
	return js, nil
}

// run is explore's work: one seed replayed, or a sweep summarised.
func (fl *exploreCmd) run(w env) error {
	a, sc, opts, js, out, errw := fl.a, fl.sc, fl.opts, fl.js, w.out, w.errw
	for _, o := range fl.overrides {
		fmt.Fprintln(errw, o)
	}
	shrinking := newShrinkLine(errw)
	opts.ShrinkProgress = shrinking.update
	if fl.isReplay {
		return replaySeed(out, sc, opts, fl.replay, fl.exh.rules, fl.arts, shrinking)
	}
	var bar *progress // set below for a long sweep; update is nil-safe
	opts.Progress = func(p explore.Progress) { bar.update(p.Done, p.Violations) }
	e, err := explore.New(sc, opts)
	if err != nil {
		return usageErrorf("%w", err)
	}
	if e.Options().Exhaustive { // the flag's, or the file's
		return fl.runExhaustive(w, e, shrinking)
	}
	// Catch SIGINT and SIGTERM before saying anything, so that a
	// signal at any point gets the summary of what ran.
	ctx, stop := interruptible(w.ctx)
	defer stop()
	if total := e.ShardSeeds(); total >= exploreProgressMin {
		bar = newProgress(errw, "explore", "seeds", total)
	}
	sum, err := e.SweepContext(ctx)
	bar.done()
	shrinking.done()
	if err != nil {
		return internalError("", err)
	}
	if err := a.reportSweep(out, js, sum); err != nil {
		return err
	}
	if !sum.Complete && !sum.Stopped {
		return &codeError{code: interruptCode(ctx), named: true, msg: fmt.Sprintf(
			"interrupted: %d of %d seeds checked; the summary is incomplete (the --json file says \"complete\": false)", sum.Ran, e.ShardSeeds())}
	}
	if f := sum.FirstFailing; f != nil && f.Shrink == explore.ShrinkInterrupted {
		return &codeError{code: interruptCode(ctx), named: true, msg: fmt.Sprintf(
			"interrupted while shrinking seed %d: every seed was checked, but its faults are shrunk only to the smallest failing set found so far; no artifacts were written", f.Seed)}
	}
	if sum.FirstFailing != nil && fl.arts != "" {
		files, err := e.WriteArtifacts(fl.arts, sum.FirstFailing)
		if err != nil {
			return artifactsError(fl.arts, err, sum.Total)
		}
		fmt.Fprintf(errw, "artifacts: %s\n", strings.Join(files, ", "))
	}
	if sum.Total > 0 || !sum.CheckedEnough() {
		return &codeError{code: exitExpect}
	}
	return nil
}

// sweepFlags are the flags of a sweep, which --replay (one seed) would
// ignore.
var sweepFlags = []string{"json", "shard", "seeds", "first", "workers", "min-checked", "check-determinism", "failfast"}

// sweepOnly refuses, with --replay, the flags it would ignore: a sweep's,
// and shrinking's without --artifacts (a replay shrinks only to write them).
func sweepOnly(changed func(flag string) bool) error {
	var given []string
	for _, name := range sweepFlags {
		if changed(name) {
			given = append(given, "--"+name)
		}
	}
	if !changed("artifacts") {
		for _, name := range []string{"no-shrink", "shrink-time"} {
			if changed(name) {
				return usageErrorf("--replay shrinks the seed's faults only to write --artifacts: --%s without --artifacts would be ignored", name)
			}
		}
	}
	switch len(given) {
	case 0:
		return nil
	case 1:
		return usageErrorf("--replay runs one seed and shows its timeline; %s is for a sweep, which it would ignore: drop it, or sweep without --replay", given[0])
	}
	return usageErrorf("--replay runs one seed and shows its timeline; %s are for a sweep, which it would ignore: drop them, or sweep without --replay", strings.Join(given, ", "))
}

// reportSweep writes the summary: as JSON to js when it is given (to out,
// for "-") and, unless the JSON went to out, as text to out.
func (a *app) reportSweep(out io.Writer, js outputFile, sum *explore.Summary) error {
	if js.path != "" {
		if err := js.write(out, sum.WriteJSON); err != nil || js.path == "-" {
			return err
		}
	}
	a.writeSummary(out, sum, false)
	return nil
}

// parseRates reads FAULT=RATE,FAULT=RATE; a fault given twice is refused
// (the last one silently won).
func parseRates(v string) (transport.Rates, error) {
	out := transport.Rates{}
	for _, part := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, usageErrorf("--rates: %s: want FAULT=RATE, such as lose-response=0.1", quote.Q(part))
		}
		f, err := transport.ParseFault(name)
		if err != nil || f == transport.None {
			return nil, usageErrorf("--rates: unknown fault %s%s; allowed are %s", quote.Q(name), didYouMean(name, faultNames()), faultList())
		}
		if _, dup := out[f]; dup {
			return nil, usageErrorf("--rates: %s given twice: give each fault's rate once", f)
		}
		r, err := strconv.ParseFloat(val, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, usageErrorf("--rates: %s=%s: want a rate, a number from 0 to 1", name, quote.Cut(val))
		}
		out[f] = r
	}
	if err := transport.Random(out).Validate(); err != nil {
		return nil, usageErrorf("--rates: %w", err)
	}
	return out, nil
}

func faultList() string { return strings.Join(faultNames(), ", ") }

// faultNames is the names of the faults, none left out.
func faultNames() []string { return namesOf(transport.Faults()) }

// namesOf is faults' names, in order.
func namesOf(faults []transport.Fault) []string {
	names := make([]string, len(faults))
	for i, f := range faults {
		names[i] = f.String()
	}
	return names
}

// signalled is the cause of a context ended by a signal.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string { return "interrupted by " + s.sig.String() }

// interruptible returns a context that SIGINT or SIGTERM cancels, with the
// signal as its cause. After the first signal the handler is removed, so
// that a second one ends the process as usual.
func interruptible(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(signalled{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
		<-done
	}
}

// interruptCode is the exit code of a run that ctx interrupted: 128 plus
// the signal's number as a shell reports it (130 for SIGINT, 143 for
// SIGTERM), 130 when no signal says otherwise.
func interruptCode(ctx context.Context) int {
	var s signalled
	if errors.As(context.Cause(ctx), &s) {
		if n, ok := s.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return exitInterrupted
}

// writeSweepHead prints what a sweep ran: the scenario, the seeds and
// shards, the rates (a swarm's kinds) and the latency.
func writeSweepHead(w io.Writer, sum *explore.Summary) {
	fmt.Fprintf(w, "explore %s (%s)\n", render.Escape(sum.Scenario), render.Escape(sum.File))
	shards := ""
	if len(sum.Shards) == 1 && sum.Shards[0].Count > 1 {
		shards = ", shard " + sum.Shards[0].String()
	} else if len(sum.Shards) > 1 {
		shards = fmt.Sprintf(", %d shards merged", len(sum.Shards))
	}
	swarm := ""
	if sum.Swarm {
		swarm = " (swarm: each seed draws its own profile of these kinds)"
	}
	fmt.Fprintf(w, "seeds %d..%d%s, rates %s%s, latency %s\n", sum.First, sum.First+uint64(sum.Seeds-1), shards, explore.RatesText(sum.Rates), swarm, sum.Latency)
	writeStrategy(w, sum)
}

// writeSummary prints a sweep's report for a person; merged reports name
// missing shards. It says "clean" only when every seed of the sweep was
// checked and none failed.
func (a *app) writeSummary(w io.Writer, sum *explore.Summary, merged bool) {
	writeSweepHead(w, sum)
	sum.WriteChecked(w)
	missing := 0
	if merged {
		ranges := sum.Missing()
		names := make([]string, 0, min(len(ranges), 10))
		for i, m := range ranges {
			missing += m.Len()
			if i < 10 {
				names = append(names, m.String())
			}
		}
		if len(ranges) > 10 {
			names = append(names, fmt.Sprintf("and %d more ranges", len(ranges)-10))
		}
		if missing > 0 {
			fmt.Fprintf(w, "missing shards (%d): %s\n", missing, strings.Join(names, ", "))
		}
	}
	switch {
	case sum.Stopped:
		fmt.Fprintf(w, "stopped at the first failing seed (--failfast): the first %d seeds ran\n", sum.Ran)
	case !sum.Complete && !merged:
		fmt.Fprintf(w, "INTERRUPTED: only the first %d seeds of the sweep ran; it is incomplete\n", sum.Ran)
	case !sum.Complete:
		fmt.Fprintln(w, "INCOMPLETE: some shards were interrupted before their last seed")
	}
	if sum.Total == 0 {
		switch {
		case sum.Complete && missing == 0 && !sum.CheckedEnough():
			fmt.Fprintf(w, "%s (--min-checked)\n", sum.NotCheckedEnough())
		case sum.Complete && missing == 0 && len(sum.Shards) == 1 && sum.Shards[0].Count > 1:
			fmt.Fprintf(w, "clean: no violation in shard %s\n", sum.Shards[0])
		case sum.Complete && missing == 0:
			fmt.Fprintln(w, "clean: no violation")
		default:
			fmt.Fprintf(w, "incomplete: no violation in the %d seeds that ran, but not every seed was checked\n", sum.Ran)
		}
		return
	}
	fmt.Fprintf(w, "\n%d violation(s) in %d seed(s), each in the seed's own run:\n", sum.Total, sum.Failed)
	for i, v := range sum.Violations {
		if i == 10 {
			fmt.Fprintf(w, "  ... and %d more\n", sum.Total-10)
			break
		}
		fmt.Fprintf(w, "  %s\n", render.Escape(v.String()))
	}
	if f := sum.FirstFailing; f != nil {
		fmt.Fprintf(w, "\nfirst failing seed %d: %s\n", f.Seed, shrinkText(f))
		writeSeedStrategy(w, sum, f)
		if f.Shrink != explore.ShrinkNotReproduced {
			for _, line := range strings.Split(strings.TrimRight(explore.FaultsYAML(f.Shrunk), "\n"), "\n") {
				fmt.Fprintf(w, "  %s\n", render.Escape(line))
			}
		}
		fmt.Fprintf(w, "%s violates:\n", f.RunText())
		for _, v := range f.Violations {
			fmt.Fprintf(w, "  %s\n", render.Escape(v.String()))
		}
		fmt.Fprintf(w, "replay: %s\n", a.replayCommand(sum, f.Seed))
	} else if len(sum.Violations) > 0 {
		seed := sum.Violations[0].Seed
		fmt.Fprintf(w, "\nfirst failing seed found %d (not shrunk: the sweep is incomplete)\nreplay: %s\n", seed, a.replayCommand(sum, seed))
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
	case explore.ShrinkInterrupted:
		return fmt.Sprintf("%s, shrinking interrupted after %d replays; the smallest failing set found so far has %d:", drawn, f.Replays, len(f.Shrunk))
	}
	if len(f.Shrunk) == 0 && len(f.Faults) > 0 {
		return drawn + ", shrunk to 0: it fails with no fault at all:"
	}
	return fmt.Sprintf("%s, shrunk to %d:", drawn, len(f.Shrunk))
}
