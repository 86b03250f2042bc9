package explore

import (
	"context"
	"fmt"
	"slices"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// exhaustive is SweepContext with Options.Exhaustive: the tree of every
// placement of at most MaxFaults faults, with the seed First for what is
// not a fault (backoff jitter, latency, the order of same-instant tasks).
// The summary holds one seed, its certificate (Summary.Exhaustive) and,
// when a placement failed, the first failing one, shrunk.
func (e *Explorer) exhaustive(ctx context.Context) (*Summary, error) {
	seed := e.opts.First
	sum := e.newSummary()
	t, err := newTree(e.opts, sum, func(rules []transport.Rule) (*SeedResult, []runtime.CallRecord) {
		r, err := e.check(seed, rules, checkSweep)
		if err != nil { // check reports a run's error as a violation; this is not reached
			r = &SeedResult{Seed: seed, Violations: []Violation{{Seed: seed, Kind: KindError, Message: err.Error()}}}
		}
		if r.Result == nil {
			return r, nil
		}
		return r, r.Result.Calls
	})
	if err != nil {
		return nil, err
	}
	if err := t.search(ctx); err != nil {
		return nil, err
	}
	if t.fail != nil && sum.Complete {
		t.finish(t.failing(ctx, seed, e.now, func(rules []transport.Rule, mode checkMode) ([]Violation, bool) {
			got, err := e.check(seed, rules, mode)
			if err != nil {
				return nil, false
			}
			return got.Violations, got.timedOut
		}))
	} else {
		t.finish(nil)
	}
	sum.seal()
	return sum, nil
}

// ReplayFaultsFailing is Failing for a run with an explicit fault set (an
// exhaustive search's placement, --replay-faults): it replays seed with
// faults and, if it fails, shrinks them.
func (e *Explorer) ReplayFaultsFailing(seed uint64, faults []transport.Rule) (*Failing, error) {
	r, err := e.ReplayFaults(seed, faults)
	if err != nil {
		return nil, err
	}
	t := &tree{opts: e.opts, fail: slices.Clone(faults), failRes: r}
	if len(r.Violations) == 0 {
		return &Failing{Seed: seed, Faults: t.fail, Shrunk: t.fail, Run: RunShrunk}, nil
	}
	return t.failing(context.Background(), seed, e.now, func(rules []transport.Rule, mode checkMode) ([]Violation, bool) {
		got, err := e.check(seed, rules, mode)
		if err != nil {
			return nil, false
		}
		return got.Violations, got.timedOut
	}), nil
}

// exhaustive is Sweep with Options.Exhaustive, for a function.
func (fe *FuncExplorer) exhaustive(ctx context.Context) (*Summary, error) {
	o, seed := fe.opts, fe.opts.First
	sum := &Summary{Scenario: "explore.Func", First: o.First, Seeds: 1, Rates: rateNames(o.Rates), Latency: o.Latency,
		Horizon: horizon(o.Horizon, nil), RecurringAlarms: o.RecurringAlarms,
		MaxAmbiguous: o.MaxAmbiguous, NoLinearizability: o.NoLinearizability, NoShrink: o.NoShrink,
		MinChecked: max(o.MinChecked, 0), Shards: []Shard{{Index: 0, Count: 1}}, Violations: []Violation{}}
	t, err := newTree(o, sum, func(rules []transport.Rule) (*SeedResult, []runtime.CallRecord) {
		r := fe.check(seed, rules, checkMode{}, true)
		return &r.SeedResult, r.report.Calls
	})
	if err != nil {
		return nil, err
	}
	if err := t.search(ctx); err != nil {
		return nil, err
	}
	var f *Failing
	if t.fail != nil && sum.Complete {
		f = t.failing(ctx, seed, fe.now, func(rules []transport.Rule, mode checkMode) ([]Violation, bool) {
			got := fe.check(seed, rules, mode, false)
			return got.Violations, got.timedOut
		})
	}
	t.finish(f)
	sum.seal()
	return sum, nil
}

// Exhaustive runs the exhaustive search of the function (Options.Exhaustive
// must be set) until ctx is done; an error says the options or the tree's
// size are out of bounds (ErrSearchTooLarge).
func (fe *FuncExplorer) Exhaustive(ctx context.Context) (*Summary, error) {
	if !fe.opts.Exhaustive {
		return nil, fmt.Errorf("%w: Exhaustive is not set: Sweep runs random seeds", ErrOptions)
	}
	return fe.exhaustive(ctx)
}

// errorSummary is the summary of a search that failed with err (a tree
// over the run limit), for Sweep: err is its one violation.
func (fe *FuncExplorer) errorSummary(err error) *Summary {
	o := fe.opts
	v := Violation{Seed: o.First, Kind: KindError, Message: err.Error()}
	sum := &Summary{Scenario: "explore.Func", First: o.First, Seeds: 1, Rates: rateNames(o.Rates), Latency: o.Latency,
		MaxAmbiguous: o.MaxAmbiguous, Shards: []Shard{{Index: 0, Count: 1}}, Ran: 1, Failed: 1, Total: 1, Complete: true,
		Violations: []Violation{v}, FirstFailing: &Failing{Seed: o.First, Violations: []Violation{v}, Run: RunSeed}}
	sum.seal()
	return sum
}

// validateExhaustive checks an exhaustive search's certificate: one seed,
// one shard, its bounds and counts in range.
func (s *Summary) validateExhaustive() error {
	c := s.Exhaustive
	if c == nil {
		return nil
	}
	bad := s.bad
	switch {
	case s.Seeds != 1:
		return bad("seeds", s.Seeds, "an exhaustive search runs one seed's tree: want 1")
	case len(s.Shards) != 1 || s.Shards[0] != (Shard{Index: 0, Count: 1}):
		return bad("shards", s.Shards, "an exhaustive search is one tree: want [{\"index\": 0, \"count\": 1}]")
	case c.MaxFaults < 1 || c.MaxFaults > MaxExhaustiveFaults:
		return bad("exhaustive.maxFaults", c.MaxFaults, "want 1 to %d", MaxExhaustiveFaults)
	case len(c.Kinds) == 0:
		return bad("exhaustive.kinds", "empty", "want the fault kinds placed")
	case c.Runs < 0 || c.Duplicates < 0 || c.Points < 0:
		return bad("exhaustive.runs", c.Runs, "counts are 0 or more")
	case c.MaxRuns < 1 || c.Runs+c.Duplicates > c.MaxRuns:
		return bad("exhaustive.maxRuns", c.MaxRuns, "want 1 or more, at least runs plus duplicates (%d)", c.Runs+c.Duplicates)
	case s.Complete && !isDigest(c.Hash):
		return bad("exhaustive.hash", c.Hash, `want "sha256:" and 64 hex digits`)
	}
	for _, k := range c.Kinds {
		if f, err := transport.ParseFault(k); err != nil || f == transport.None {
			return bad("exhaustive.kinds", k, "not a fault; allowed are %s", faultNames())
		}
	}
	return nil
}
