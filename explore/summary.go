package explore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/dosim/dosim/transport"
)

// MaxViolations is how many violations a summary keeps; the rest are counted.
const MaxViolations = 100

// Summary is the result of a sweep, or of several merged.
type Summary struct {
	Scenario string             `json:"scenario"`
	File     string             `json:"file"`
	First    uint64             `json:"first"`
	Seeds    int                `json:"seeds"`
	Rates    map[string]float64 `json:"rates"`
	// KeepRules says the scenario's own fault rules ran under the random faults.
	KeepRules bool `json:"keepRules,omitempty"`
	// Shards are the shards this summary covers.
	Shards []Shard `json:"shards"`
	// Ran counts the seeds checked; Failed those with a violation.
	Ran    int `json:"ran"`
	Failed int `json:"failed"`
	// Histories counts object histories checked for linearizability, and
	// Skipped those with too many ambiguous calls.
	Histories int `json:"histories"`
	Skipped   int `json:"skipped"`
	// Background counts object histories not checked because background
	// work ran (ReasonBackground).
	Background int `json:"background,omitempty"`
	// Violations holds the first MaxViolations, by seed; Total counts all.
	Violations []Violation `json:"violations"`
	Total      int         `json:"total"`
	// FirstFailing is the lowest failing seed, shrunk.
	FirstFailing *Failing `json:"firstFailing,omitempty"`
}

// Failing is the lowest failing seed with its fault set shrunk: the
// smallest set of faults, each naming one call and attempt, that still
// makes the run fail.
type Failing struct {
	Seed       uint64           `json:"seed"`
	Violations []Violation      `json:"violations"`
	Faults     []transport.Rule `json:"faults"`
	Shrunk     []transport.Rule `json:"shrunk"`
	// Shrink says how shrinking went, and Replays how many runs it took.
	Shrink  ShrinkResult `json:"shrink,omitempty"`
	Replays int          `json:"replays,omitempty"`
}

// Clean reports whether no seed failed.
func (s *Summary) Clean() bool { return s.Total == 0 }

func (e *Explorer) newSummary() *Summary {
	rates := map[string]float64{}
	for f, r := range e.opts.Rates {
		rates[f.String()] = r
	}
	return &Summary{Scenario: e.sc.Name, File: e.sc.File, First: e.opts.First, Seeds: e.opts.Seeds,
		Rates: rates, KeepRules: e.opts.KeepRules, Shards: []Shard{e.opts.Shard}, Violations: []Violation{}}
}

func (s *Summary) add(r *SeedResult) {
	s.Ran++
	s.Histories += r.Checked
	s.Skipped += r.Skipped
	s.Background += r.Background
	if len(r.Violations) > 0 {
		s.Failed++
	}
	for _, v := range r.Violations {
		s.Total++
		if len(s.Violations) < MaxViolations {
			s.Violations = append(s.Violations, v)
		}
	}
}

// WriteJSON writes the summary as indented JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// ReadSummary reads a summary written by WriteJSON.
func ReadSummary(r io.Reader) (*Summary, error) {
	var s Summary
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMerge, err)
	}
	return &s, nil
}

// ErrMerge is wrapped by errors for summaries that cannot be merged.
var ErrMerge = errors.New("explore merge")

// Merge combines the summaries of the shards of one sweep: the same
// scenario, seed range and rates, each shard once.
func Merge(parts ...*Summary) (*Summary, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no summaries", ErrMerge)
	}
	a := parts[0]
	out := &Summary{Scenario: a.Scenario, File: a.File, First: a.First, Seeds: a.Seeds, Rates: a.Rates, KeepRules: a.KeepRules, Violations: []Violation{}}
	seen := map[int]bool{}
	count := 0
	for i, p := range parts {
		switch {
		case p.Scenario != a.Scenario:
			return nil, fmt.Errorf("%w: summary %d is of scenario %q, not %q", ErrMerge, i+1, p.Scenario, a.Scenario)
		case p.First != a.First || p.Seeds != a.Seeds:
			return nil, fmt.Errorf("%w: summary %d covers seeds %d+%d, not %d+%d", ErrMerge, i+1, p.First, p.Seeds, a.First, a.Seeds)
		case !maps.Equal(p.Rates, a.Rates) || p.KeepRules != a.KeepRules:
			return nil, fmt.Errorf("%w: summary %d used rates %s, not %s", ErrMerge, i+1, RatesText(p.Rates), RatesText(a.Rates))
		}
		for _, sh := range p.Shards {
			if count == 0 {
				count = sh.Count
			}
			if sh.Count != count {
				return nil, fmt.Errorf("%w: summary %d has shard %s of a %d-way split, others of a %d-way split", ErrMerge, i+1, sh, sh.Count, count)
			}
			if seen[sh.Index] {
				return nil, fmt.Errorf("%w: shard %s appears twice", ErrMerge, sh)
			}
			seen[sh.Index] = true
			out.Shards = append(out.Shards, sh)
		}
		out.Ran += p.Ran
		out.Failed += p.Failed
		out.Histories += p.Histories
		out.Skipped += p.Skipped
		out.Background += p.Background
		out.Total += p.Total
		out.Violations = append(out.Violations, p.Violations...)
		if p.FirstFailing != nil && (out.FirstFailing == nil || p.FirstFailing.Seed < out.FirstFailing.Seed) {
			out.FirstFailing = p.FirstFailing
		}
	}
	sort.Slice(out.Shards, func(i, j int) bool { return out.Shards[i].Index < out.Shards[j].Index })
	sort.SliceStable(out.Violations, func(i, j int) bool { return out.Violations[i].Seed < out.Violations[j].Seed })
	if len(out.Violations) > MaxViolations {
		out.Violations = out.Violations[:MaxViolations]
	}
	return out, nil
}

// Missing lists the shards of the split that the summary lacks.
func (s *Summary) Missing() []Shard {
	if len(s.Shards) == 0 {
		return nil
	}
	n := s.Shards[0].Count
	have := map[int]bool{}
	for _, sh := range s.Shards {
		have[sh.Index] = true
	}
	var out []Shard
	for i := range n {
		if !have[i] {
			out = append(out, Shard{Index: i, Count: n})
		}
	}
	return out
}

// RatesText writes rates as FAULT=RATE pairs in fault order.
func RatesText(rates map[string]float64) string {
	keys := slices.Sorted(maps.Keys(rates))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, rates[k])
	}
	return strings.Join(parts, ",")
}

// ReplayCommand is the dosim command that replays seed of the sweep.
func (s *Summary) ReplayCommand(seed uint64) string {
	cmd := fmt.Sprintf("dosim explore %s --replay %d --rates %s", s.File, seed, RatesText(s.Rates))
	if s.KeepRules {
		cmd += " --keep-rules"
	}
	return cmd
}
