package explore

// The tree of an exhaustive search. A run's delivery decision points are
// the attempts of its calls (transport.Attempt{Call, N}); which attempts
// a run makes depends on its faults (a retryable fault makes a retry, a
// new decision point; a fault that is not retried ends the call, and a
// caller that gives up makes no later calls). So the placements are found
// as a tree: the fault-free run first, then, for each decision point that
// run met and each fault kind, the run with that fault added (as a rule
// naming the call and attempt), and so on from each new run, to
// Options.MaxFaults faults, one level of the tree at a time.
//
// A placement is a fault set every fault of which struck an attempt of its
// own run. Every placement of at most b faults is reached: order its
// faults by when its run decided their attempts; the run of its first i
// faults is the same run up to the (i+1)-th fault's decision (the runs are
// deterministic, and a fault is decided per attempt without drawing from
// the seeded source, so nothing before it moves), so that attempt is a
// decision point of the run of the first i, and the tree adds it there.
// (One thing depends on a plan's rules before they strike: a plan that
// names storage-write-fails journals storage writes from the start, rule
// L7. The journal confirms each write at its release point when no fault
// strikes there, so the runs still coincide until the fault;
// TestExhaustive_JournalMovesNothing checks it.)
//
// What is deduplicated, and why it is sound:
//   - a fault set reached from several parents ({a, b} from {a} and from
//     {b}) runs once: a run is a function of its seed and its fault rules,
//     whatever order they were added in (each names its own call and
//     attempt, so no two match one attempt);
//   - a candidate set in which some fault met no attempt of its run (a
//     fault placed earlier in the run ended that call, or moved the call
//     numbers) is not counted and not searched further: a rule that
//     matches no attempt changes nothing, so its run is the run of the
//     faults that did strike, a smaller placement that the tree reaches
//     anyway (Certificate.Duplicates counts these). A storage-write-fails
//     fault on a delivered attempt counts as struck even when the turn had
//     no write to fail (its record then shows no fault, rule L7).
//
// Levels run in the order of their fault sets (comparePlacements), on the
// workers, and are judged in that order, so the search, its certificate
// and its first failure do not depend on the workers. The search stops at
// the end of the level of its first failure: no smaller fault set fails.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// treeRun is one run of the tree as the search keeps it, while its level
// runs and until the next level is made: its check's verdict without the
// run (SeedResult.Result, with every call record, is dropped as soon as
// the run ends), whether its faults all struck, and, unless its level is
// the last, its decision points, from which the next level is made. So
// the search holds one level's runs at a time, the last level's in a size
// that does not grow with the calls (issue 35: 2.4 GB at 400 calls and
// one fault before, all of it call records and decision points).
type treeRun struct {
	res    *SeedResult
	points []transport.Rule
	struck bool
}

// tree is an exhaustive search in progress.
type tree struct {
	opts  Options
	kinds []transport.Fault
	run   func(rules []transport.Rule) (*SeedResult, []runtime.CallRecord)
	sum   *Summary
	cert  *Certificate
	hash  *placementHash
	// points are the decision points of the runs counted so far (the
	// certificate's Points); the workers add to them, under mu.
	mu     sync.Mutex
	points map[transport.Rule]bool
	// fail is the first failing placement, and failRes its run's check.
	fail    []transport.Rule
	failRes *SeedResult
}

// newTree prepares the search of opts's rates' kinds, recording into sum.
func newTree(opts Options, sum *Summary, run func(rules []transport.Rule) (*SeedResult, []runtime.CallRecord)) (*tree, error) {
	var kinds []transport.Fault
	var names []string
	for _, f := range transport.Faults() {
		// A connection fault strikes no attempt: its drops are the
		// seed's, drawn at its rate in every run of the tree.
		if opts.Rates[f] > 0 && !f.OnConnection() {
			kinds, names = append(kinds, f), append(names, f.String())
		}
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("%w: rates %s name no attempt fault with a rate above 0: an exhaustive search places the kinds of attempt faults the rates name", ErrOptions, RatesText(rateNames(opts.Rates)))
	}
	cert := &Certificate{MaxFaults: opts.MaxFaults, Kinds: names, MaxRuns: opts.MaxRuns}
	sum.Exhaustive = cert
	return &tree{opts: opts, kinds: kinds, run: run, sum: sum, cert: cert, hash: newPlacementHash(), points: map[transport.Rule]bool{}}, nil
}

// search runs the tree, level by level, until b faults, its first failure
// or ctx done (then sum.Complete stays false).
func (t *tree) search(ctx context.Context) error {
	level := [][]transport.Rule{{}} // the fault-free run; not nil: nil draws random faults
	for k := 0; ; k++ {
		results := t.runLevel(ctx, level, k == t.opts.MaxFaults)
		seen := map[string]bool{}
		var children [][]transport.Rule
		for i, r := range results {
			node := level[i]
			if !r.struck {
				t.cert.Duplicates++
				continue
			}
			t.count(node, r)
			if t.fail == nil && len(r.res.Violations) > 0 {
				t.fail, t.failRes = node, r.res
			}
			if k == t.opts.MaxFaults || t.fail != nil {
				continue
			}
			children = t.expand(node, r.points, children, seen)
			if made := t.cert.Runs + t.cert.Duplicates + len(children); made > t.opts.MaxRuns {
				return t.tooBig(made, "grew past")
			}
		}
		t.sum.Ran = 1
		if len(results) < len(level) {
			return nil // interrupted: incomplete
		}
		if k == 0 {
			if est := estimate(len(r0points(results)), len(t.kinds), t.opts.MaxFaults); est > t.opts.MaxRuns {
				return t.tooBig(est, "holds about")
			}
		}
		if t.fail != nil || len(children) == 0 {
			break
		}
		slices.SortFunc(children, comparePlacements)
		level = children
	}
	t.sum.Complete = true
	t.cert.Points = len(t.points)
	t.cert.Hash = t.hash.sum()
	return nil
}

// r0points are the decision points of the fault-free run.
func r0points(results []treeRun) []transport.Rule {
	if len(results) == 0 {
		return nil
	}
	return results[0].points
}

// estimate is how many fault sets of at most b faults of k kinds p points
// hold, the sum of C(p, i)·k^i: about the size of the tree (retries add
// points, faults that end a call take some away). It saturates at
// math.MaxInt.
func estimate(p, k, b int) int {
	total, term := 1.0, 1.0
	for i := 1; i <= b && i <= p; i++ {
		term = term * float64(p-i+1) / float64(i) * float64(k)
		total += term
	}
	if total >= math.MaxInt/2 {
		return math.MaxInt
	}
	return int(math.Round(total))
}

// tooBig is the error of a tree over the run limit.
func (t *tree) tooBig(runs int, how string) error {
	b := t.opts.MaxFaults
	try := fmt.Sprintf("--max-faults %d, ", b-1)
	if b == 1 {
		try = ""
	}
	return fmt.Errorf("%w: %w: max faults (--max-faults) %d: the tree of placements %s %s runs (%s, %s), over the limit of %s (max runs, --max-runs): try %sfewer fault kinds in the rates, or a higher --max-runs",
		ErrOptions, ErrSearchTooLarge, b, how, thousands(runs), plural(len(t.points), "decision point"), plural(len(t.kinds), "fault kind"), thousands(t.opts.MaxRuns), try)
}

// runLevel runs a level's fault sets on the workers, in order, and returns
// the runs of the first ones: all of them unless ctx was done first.
func (t *tree) runLevel(ctx context.Context, level [][]transport.Rule, last bool) []treeRun {
	out := make([]treeRun, len(level))
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range min(max(t.opts.Workers, 1), len(level)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				k := next.Add(1) - 1
				if k >= int64(len(level)) {
					return
				}
				out[k] = t.keep(level[k], last)
			}
		}()
	}
	wg.Wait()
	// A fault set taken is always run, and they are taken in order.
	for i := range out {
		if out[i].res == nil {
			return out[:i]
		}
	}
	return out
}

// keep runs the fault set node and returns what the search keeps of the
// run (treeRun): on the last level, no decision points. A run whose
// faults all struck adds its decision points to the certificate's.
func (t *tree) keep(node []transport.Rule, last bool) treeRun {
	res, calls := t.run(slices.Clone(node))
	slim := *res
	slim.Result = nil
	r := treeRun{res: &slim, points: decisionPoints(calls), struck: struck(node, calls)}
	if r.struck {
		t.mu.Lock()
		for _, p := range r.points {
			t.points[p] = true
		}
		t.mu.Unlock()
	}
	if last {
		r.points = nil
	}
	return r
}

// count adds a placement's run to the certificate and the summary.
func (t *tree) count(node []transport.Rule, r treeRun) {
	t.cert.Runs++
	t.hash.add(node)
	s, res := t.sum, r.res
	s.addPaths(res.paths)
	s.addFired(res.Faults, res.drops)
	s.Histories += res.Checked
	for why, n := range res.Unchecked {
		if s.Unchecked == nil {
			s.Unchecked = map[string]int{}
		}
		s.Unchecked[why] += n
	}
}

// expand appends to children (deduplicated by seen) each fault set that
// adds one fault of each kind, at one decision point of node's run that
// node does not already fault, to node.
func (t *tree) expand(node []transport.Rule, points []transport.Rule, children [][]transport.Rule, seen map[string]bool) [][]transport.Rule {
	have := map[[2]int]bool{}
	for _, r := range node {
		have[[2]int{r.Call, r.Attempt}] = true
	}
	for _, p := range points {
		if have[[2]int{p.Call, p.Attempt}] {
			continue
		}
		for _, kind := range t.kinds {
			p.Fault = kind
			child := append(slices.Clone(node), p)
			slices.SortFunc(child, comparePoint)
			key := FaultSetText(child)
			if seen[key] {
				continue
			}
			seen[key] = true
			children = append(children, child)
		}
	}
	return children
}

// decisionPoints are the attempts of calls, as rules naming each call (by
// its order), method and attempt, with no fault.
func decisionPoints(calls []runtime.CallRecord) []transport.Rule {
	var out []transport.Rule
	for i, c := range calls {
		for _, a := range c.Attempts {
			out = append(out, transport.Rule{Call: i + 1, Method: c.Method, Attempt: a.N})
		}
	}
	return out
}

// struck reports whether every fault of node struck an attempt of its run:
// the attempt is there, of the method, with the fault (a
// storage-write-fails fault on a delivered attempt counts, though a turn
// with nothing to fail leaves no fault in its record).
func struck(node []transport.Rule, calls []runtime.CallRecord) bool {
	for _, r := range node {
		if r.Call < 1 || r.Call > len(calls) {
			return false
		}
		c := calls[r.Call-1]
		i := slices.IndexFunc(c.Attempts, func(a runtime.AttemptRecord) bool { return a.N == r.Attempt })
		if c.Method != r.Method || i < 0 {
			return false
		}
		a := c.Attempts[i]
		if a.Fault != r.Fault && (r.Fault != transport.StorageWriteFails || !a.Delivered) {
			return false
		}
	}
	return true
}

// failing is the first failing placement, shrunk with replay (as a random
// sweep's first failing seed is) unless opts.NoShrink, with seed.
func (t *tree) failing(ctx context.Context, seed uint64, now func() time.Time, replay func([]transport.Rule, checkMode) ([]Violation, bool)) *Failing {
	f := &Failing{Seed: seed, Violations: t.failRes.Violations, Faults: t.fail, Shrunk: t.fail, Run: RunShrunk}
	if t.opts.NoShrink {
		f.Shrink = ShrinkOff
		return f
	}
	shrink(ctx, f, t.opts, now, replay)
	if f.Run == RunShrunk { // the report is the shrunk replay's, every check of it
		got, _ := replay(slices.Clone(f.Shrunk), checkAll)
		f.settle(got)
	}
	if f.Run == RunSeed { // not reproduced: the placement itself, as rules, is what failed
		f.Run, f.Shrunk = RunShrunk, f.Faults
	}
	return f
}

// finish records the first failure in the summary.
func (t *tree) finish(f *Failing) {
	if t.failRes == nil {
		return
	}
	t.sum.Failed, t.sum.Total = 1, len(t.failRes.Violations)
	t.sum.Violations = slices.Clone(t.failRes.Violations[:min(len(t.failRes.Violations), MaxViolations)])
	t.sum.FirstFailing = f
}
