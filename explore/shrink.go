package explore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/transport"
)

// Replay runs one seed with the sweep's random faults, keeping everything
// the artifacts need.
func (e *Explorer) Replay(seed uint64) (*SeedResult, error) { return e.check(seed, nil, checkAll) }

// ReplayFaults runs one seed with an explicit fault set instead of random
// faults: what a shrunk set replays with.
func (e *Explorer) ReplayFaults(seed uint64, faults []transport.Rule) (*SeedResult, error) {
	r, err := e.check(seed, append([]transport.Rule{}, faults...), checkAll)
	if err != nil || r.Result == nil {
		return r, err
	}
	return r, struckNothing(faults, r.Result.Calls)
}

// checkMode narrows what a check does, for the replays of shrinking.
type checkMode struct {
	// skipLinear skips the linearizability check: the failure being
	// shrunk is of another kind, and a long history's check can take
	// far longer than its run.
	skipLinear bool
	// linearTimeout, when > 0, stops a linearizability check that takes
	// longer (the rest of the shrinking budget).
	linearTimeout time.Duration
	// sweep runs the seed without checking the scenario's own
	// expectations (scenario.SkipExpectations): a sweep never reads
	// them, and its seeds are judged by every check of the explorer.
	sweep bool
	// trace keeps all the run did as text (a function's sweep, for the
	// determinism self-check).
	trace bool
}

// checkAll is a full check, as a replay makes.
var checkAll = checkMode{}

// checkSweep is a full check as a sweep makes it: every check of the
// explorer, not the scenario's own expectations (which are for its own
// faults and which a sweep never reads).
var checkSweep = checkMode{sweep: true}

// DefaultShrinkTime is how long shrinking may take by default.
const DefaultShrinkTime = 60 * time.Second

// ShrinkResult says how shrinking a failing seed's fault set went.
type ShrinkResult string

// How shrinking went.
const (
	// ShrinkDone: Shrunk still fails the same way, and dropping any one
	// of its faults stops the failure (an empty Shrunk: the seed fails
	// with no fault at all).
	ShrinkDone ShrinkResult = "shrunk"
	// ShrinkNotReproduced: replaying the drawn faults as explicit rules
	// did not fail the same way (the run took another course without the
	// random draws), so nothing was shrunk; Shrunk is the drawn set and
	// the seed itself is what replays the failure.
	ShrinkNotReproduced ShrinkResult = "not-reproduced"
	// ShrinkBudget: Options.ShrinkTime ran out; Shrunk is the smallest
	// failing set found so far.
	ShrinkBudget ShrinkResult = "budget-exhausted"
	// ShrinkOff: Options.NoShrink kept the drawn set.
	ShrinkOff ShrinkResult = "off"
	// ShrinkInterrupted: the sweep's context was done (SIGINT) while
	// shrinking; Shrunk is the smallest failing set found so far.
	ShrinkInterrupted ShrinkResult = "interrupted"
)

// Failing replays a failing seed and shrinks its fault set by delta
// debugging (ddmin): it first checks that the drawn faults, replayed as
// explicit rules, still fail the same way, and whether no fault at all
// does; then it tries halves of the set, then quarters and their
// complements, and so on, keeping any part that still fails. One fault
// that matters among n is found in about 2·log2(n) replays; the result
// is a set from which no single fault can be dropped. Shrinking stops
// early, keeping the smallest failing set so far, when Options.ShrinkTime
// runs out.
func (e *Explorer) Failing(seed uint64) (*Failing, error) {
	return e.failing(context.Background(), seed)
}

// failing is Failing, shrinking only while ctx is not done: a sweep
// interrupted once every seed ran keeps the smallest set found so far
// (ShrinkInterrupted).
func (e *Explorer) failing(ctx context.Context, seed uint64) (*Failing, error) {
	r, err := e.Replay(seed)
	if err != nil {
		return nil, err
	}
	f := &Failing{Seed: seed, Violations: r.Violations, Faults: r.Faults, Shrunk: r.Faults, Run: RunSeed}
	e.opts.seedRun(e.sched, seed).describe(f, e.sched)
	if len(r.Violations) == 0 {
		return f, nil
	}
	if e.opts.NoShrink {
		f.Shrink = ShrinkOff
		return f, nil
	}
	shrink(ctx, f, e.opts, e.now, func(rules []transport.Rule, mode checkMode) ([]Violation, bool) {
		got, err := e.check(seed, rules, mode)
		if err != nil {
			return nil, false
		}
		return got.Violations, got.timedOut
	})
	if f.Run == RunShrunk { // the report is the shrunk replay's, every check of it
		got, err := e.ReplayFaults(seed, f.Shrunk)
		if err != nil {
			return nil, err
		}
		f.settle(got.Violations)
	}
	return f, nil
}

// orSweep adds to f the sweep's nondeterminism violations of f's seed,
// which compare two runs and do not show in one replay; a seed that failed
// only so is not shrunk.
func (f *Failing) orSweep(vs []Violation) *Failing {
	only := len(f.Violations) == 0
	for _, v := range vs {
		if v.Seed == f.Seed && v.Kind == KindNondeterminism {
			f.Violations = append(f.Violations, v)
		}
	}
	if only {
		f.Shrink, f.Shrunk, f.Run = ShrinkNotReproduced, f.Faults, RunSeed
	}
	return f
}

// settle keeps the violations of the final replay of the shrunk faults, or
// falls back to the seed's run if that replay, with every check, does not
// fail the same way.
func (f *Failing) settle(got []Violation) {
	kind := f.Violations[0].Kind
	if slices.ContainsFunc(got, func(v Violation) bool { return v.Kind == kind }) {
		f.Violations = got
		return
	}
	f.Run, f.Shrunk, f.Shrink = RunSeed, f.Faults, ShrinkNotReproduced
}

// shrink shrinks f's drawn faults (f.Faults, which fail with the kind of
// f.Violations[0]) with ddmin, replaying each candidate set with replay,
// which returns the replay's violations and whether a linearizability check
// ran out of time. It counts replays, reports progress, and stops when
// opts.ShrinkTime runs out, reading the clock now only to stop, or when
// ctx is done. It keeps in f the smallest failing set, its violations,
// and how shrinking went.
func shrink(ctx context.Context, f *Failing, opts Options, now func() time.Time, replay func(rules []transport.Rule, mode checkMode) ([]Violation, bool)) {
	kind := f.Violations[0].Kind
	drawn := f.Violations
	deadline := now().Add(opts.ShrinkTime)
	smallest := len(f.Faults)
	test := func(rules []transport.Rule) (fails, stop bool) {
		left := deadline.Sub(now())
		if f.Replays > 0 && (left <= 0 || ctx.Err() != nil) {
			return false, true
		}
		f.Replays++
		mode := checkMode{skipLinear: !ofHistory(kind), linearTimeout: max(left, time.Millisecond)}
		got, timedOut := replay(append([]transport.Rule{}, rules...), mode) // not nil: nil draws random faults
		if timedOut {
			return false, true
		}
		fails = slices.ContainsFunc(got, func(v Violation) bool { return v.Kind == kind })
		if fails && len(rules) <= smallest {
			smallest = len(rules)
			f.Violations = got
		}
		if opts.ShrinkProgress != nil {
			opts.ShrinkProgress(f.Replays, smallest)
		}
		return fails, false
	}
	f.Shrunk, f.Shrink = ddmin(slices.Clone(f.Faults), test)
	if f.Shrink == ShrinkDone {
		f.Shrunk, f.Shrink = shiftDown(f.Shrunk, test)
	}
	if f.Shrink == ShrinkBudget && ctx.Err() != nil {
		f.Shrink = ShrinkInterrupted
	}
	f.Run = RunShrunk
	if f.Shrink == ShrinkNotReproduced {
		f.Violations, f.Run = drawn, RunSeed
	}
}

// ddmin shrinks all to a smallest set that test says still fails. test
// replays a set and reports whether it fails, or asks to stop (the time
// budget ran out). It returns the set and how shrinking went; its tests
// depend only on all and test's answers.
func ddmin(all []transport.Rule, test func([]transport.Rule) (fails, stop bool)) ([]transport.Rule, ShrinkResult) {
	fails, stop := test(all)
	switch {
	case stop:
		return all, ShrinkBudget
	case !fails:
		return all, ShrinkNotReproduced
	case len(all) == 0:
		return all, ShrinkDone
	}
	if fails, stop := test(nil); stop {
		return all, ShrinkBudget
	} else if fails {
		return nil, ShrinkDone
	}
	cur, n := all, 2
	for len(cur) >= 2 {
		chunks := split(cur, n)
		next := -1
		// A chunk that fails alone; then, with more than two chunks (with
		// two, each complement is the other chunk), all but one chunk.
		for i, c := range chunks {
			fails, stop := test(c)
			if stop {
				return cur, ShrinkBudget
			}
			if fails {
				cur, n, next = c, 2, i
				break
			}
		}
		if next < 0 && n > 2 {
			for i := range chunks {
				c := complement(chunks, i)
				fails, stop := test(c)
				if stop {
					return cur, ShrinkBudget
				}
				if fails {
					cur, n, next = c, max(n-1, 2), i
					break
				}
			}
		}
		if next >= 0 {
			continue
		}
		if n >= len(cur) {
			break
		}
		n = min(2*n, len(cur))
	}
	return cur, ShrinkDone
}

// shiftDown shrinks further what ddmin left 1-minimal: a fault that
// needs an earlier fault of its call only to have an attempt to strike
// (a lost request, then the lost reply of the retry that matters) is
// moved to that attempt. For each call with more than one fault it tries
// the set without the call's earliest fault and with its later ones one
// attempt earlier, and keeps the first such set that still fails, until
// none does.
func shiftDown(cur []transport.Rule, test func([]transport.Rule) (fails, stop bool)) ([]transport.Rule, ShrinkResult) {
	for {
		shifted := false
		for i := range cur {
			cand, ok := shiftedSet(cur, i)
			if !ok {
				continue
			}
			fails, stop := test(cand)
			if stop {
				return cur, ShrinkBudget
			}
			if fails {
				cur, shifted = cand, true
				break
			}
		}
		if !shifted {
			return cur, ShrinkDone
		}
	}
}

// shiftedSet is set without its i-th fault and with the later faults of
// the same call one attempt earlier; false when no later fault of the
// call follows the i-th.
func shiftedSet(set []transport.Rule, i int) ([]transport.Rule, bool) {
	r := set[i]
	out := make([]transport.Rule, 0, len(set)-1)
	later := false
	for j, o := range set {
		switch {
		case j == i:
			continue
		case o.Call == r.Call && o.Method == r.Method && o.Attempt > r.Attempt:
			o.Attempt--
			later = true
		}
		out = append(out, o)
	}
	return out, later
}

// split cuts s into n chunks of nearly equal size, in order.
func split(s []transport.Rule, n int) [][]transport.Rule {
	out := make([][]transport.Rule, 0, n)
	for i := range n {
		out = append(out, s[i*len(s)/n:(i+1)*len(s)/n])
	}
	return out
}

// complement is every chunk but the i-th, in order.
func complement(chunks [][]transport.Rule, i int) []transport.Rule {
	var out []transport.Rule
	for j, c := range chunks {
		if j != i {
			out = append(out, c...)
		}
	}
	return out
}

// FaultsYAML writes a fault set as a scenario's faults block: paste it
// into the scenario (or run `dosim run`) to replay the shrunk run without
// random faults.
func FaultsYAML(rules []transport.Rule) string {
	var b strings.Builder
	b.WriteString("faults:\n  rules:\n")
	if len(rules) == 0 {
		b.WriteString("    []\n")
	}
	for _, r := range rules {
		fmt.Fprintf(&b, "    - {call: %d, method: %s, attempt: %d, fault: %s}\n", r.Call, r.Method, r.Attempt, r.Fault)
	}
	return b.String()
}

// ReplayCommand is the dosim command that replays seed of a sweep.
func (e *Explorer) ReplayCommand(seed uint64) string { return e.newSummary().ReplayCommand(seed) }

// WriteArtifacts replays the run a failing seed's report describes
// (f.Run: its shrunk replay, or the seed's own run) and writes, under dir:
// timeline.html (that run), linearizability-OBJECT.html (porcupine's view
// of each history of it that failed the check), faults.yaml (the shrunk
// fault set), violations.txt (that run's) and replay.txt. It returns the
// files written.
func (e *Explorer) WriteArtifacts(dir string, f *Failing) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r, err := e.Replay(f.Seed)
	if f.Run == RunShrunk {
		r, err = e.ReplayFaults(f.Seed, f.Shrunk)
	}
	if err != nil {
		return nil, err
	}
	var written []string
	write := func(name string, data []byte) error {
		p, err := writeArtifact(dir, name, data)
		if err != nil {
			return err
		}
		written = append(written, p)
		return nil
	}
	if r.Result != nil {
		var b bytes.Buffer
		rep := r.Result.Report()
		rep.Name = fmt.Sprintf("%s, %s", rep.Name, f.RunText())
		// The page leads with what the checks found (rule C10); the file's
		// own expectations are for its own faults, not the explorer's.
		rep.Failures, rep.Expectations, rep.Violations = nil, 0, violationLines(r.Violations)
		if err := render.HTML(&b, rep); err != nil {
			return written, err
		}
		if err := write("timeline.html", b.Bytes()); err != nil {
			return written, err
		}
		b.Reset()
		if err := render.ChromeTrace(&b, rep); err != nil {
			return written, err
		}
		if err := write("trace.json", b.Bytes()); err != nil {
			return written, err
		}
	}
	for _, v := range r.Violations {
		h := r.Linear[v.Object]
		if !ofHistory(v.Kind) || h == nil {
			continue
		}
		var b bytes.Buffer
		if err := h.Visualize(&b); err != nil {
			return written, err
		}
		if err := write(linearizabilityFile(v.Object), b.Bytes()); err != nil {
			return written, err
		}
	}
	var vs strings.Builder
	fmt.Fprintf(&vs, "%s violates:\n", f.RunText())
	for _, v := range r.Violations {
		vs.WriteString(v.String() + "\n")
	}
	if err := write("violations.txt", []byte(vs.String())); err != nil {
		return written, err
	}
	if err := write("faults.yaml", []byte(FaultsYAML(f.Shrunk))); err != nil {
		return written, err
	}
	if err := write("replay.txt", []byte(e.ReplayCommand(f.Seed)+"\n")); err != nil {
		return written, err
	}
	return written, nil
}

// violationLines are violations as a report lists them, one a line.
func violationLines(vs []Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}
