package explore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"

	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// MaxViolations is how many violations a summary keeps; the rest are counted.
const MaxViolations = 100

// MaxSummarySize is the largest summary file ReadSummary reads, in bytes.
const MaxSummarySize = 64 << 20

// Summary is the result of a sweep, or of several merged. It holds counts
// and the first violations only, so its size does not grow with the seeds.
type Summary struct {
	Scenario string `json:"scenario"`
	File     string `json:"file"`
	// ScenarioDigest is the scenario file's "sha256:HEX" (empty for a
	// scenario built in code).
	ScenarioDigest string             `json:"scenarioDigest"`
	First          uint64             `json:"first"`
	Seeds          int                `json:"seeds"`
	Rates          map[string]float64 `json:"rates"`
	// KeepRules says the scenario's own fault rules ran under the random faults.
	KeepRules bool `json:"keepRules,omitempty"`
	// Swarm says each seed drew its own fault profile from the kinds in
	// Rates (Options.Swarm).
	Swarm bool `json:"swarm,omitempty"`
	// Latency is the link latency of the sweep's runs (zero: none).
	Latency transport.Latency `json:"latency"`
	// Scheduling is the strategy of the sweep's runs (Options.Strategy).
	Scheduling
	// MaxAmbiguous, NoLinearizability and NoShrink are the options of the
	// sweep that change its results; Classes names the namespaces run with
	// another constructor than the scenario's.
	MaxAmbiguous      int      `json:"maxAmbiguous"`
	NoLinearizability bool     `json:"noLinearizability,omitempty"`
	NoShrink          bool     `json:"noShrink,omitempty"`
	Classes           []string `json:"classes,omitempty"`
	// Fingerprint is the "sha256:HEX" of every other field of the summary:
	// the scenario's name and digest, the seed range, the rates and the
	// options above, the shards it covers and every count and violation
	// below. A summary whose fields were edited (a shard relabelled, its
	// counts raised) no longer matches it, and is refused (Validate).
	Fingerprint string `json:"fingerprint"`
	// Shards are the shards this summary covers.
	Shards []Shard `json:"shards"`
	// Complete says every seed of Shards ran; an interrupted sweep is not
	// complete and has run only the first Ran seeds of its shard.
	Complete bool `json:"complete"`
	// Stopped says the sweep stopped at its first failure
	// (Options.FailFast): it ran the first Ran seeds of its shard, is not
	// Complete, and its first failing seed is the shard's lowest.
	Stopped bool `json:"stopped,omitempty"`
	// Ran counts the seeds checked; Failed those with a violation.
	Ran    int `json:"ran"`
	Failed int `json:"failed"`
	// Histories counts object histories checked for linearizability;
	// Unchecked those that were not, by reason (the Reason constants).
	Histories int            `json:"histories"`
	Unchecked map[string]int `json:"unchecked,omitempty"`
	// Horizon is the liveness horizon in force (0: liveness off), and
	// RecurringAlarms whether alarms that re-arm for ever were allowed.
	Horizon         time.Duration `json:"horizon"`
	RecurringAlarms bool          `json:"recurringAlarms,omitempty"`
	// Interleaving names the turns declared meant to interleave at their
	// awaits (Options.Interleaving and the scenario's), sorted.
	Interleaving []string `json:"interleaving,omitempty"`
	// MinChecked is the least share of object histories the sweep had to
	// check to be clean (Options.MinChecked; 0: no minimum).
	MinChecked float64 `json:"minChecked"`
	// Fired counts the faults that struck an attempt, by method and fault.
	Fired map[string]map[string]int `json:"fired,omitempty"`
	// Paths counts the calls that took each rule path (the Path constants).
	Paths map[string]int `json:"paths,omitempty"`
	// Violations holds the first MaxViolations, by seed; Total counts all.
	Violations []Violation `json:"violations"`
	Total      int         `json:"total"`
	// FirstFailing is the lowest failing seed, shrunk (nil when the sweep
	// was interrupted).
	FirstFailing *Failing `json:"firstFailing,omitempty"`
	// Exhaustive is the certificate of an exhaustive search
	// (Options.Exhaustive): what it enumerated (nil for random seeds).
	Exhaustive *Certificate `json:"exhaustive,omitempty"`

	source string // the file it was read from, for messages
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
	// Run says which run Violations describe, as the timeline and the
	// artifacts do (rule C5): RunShrunk, the seed replayed with the Shrunk
	// faults only, when shrinking reproduced the failure; else RunSeed,
	// the seed's own run.
	Run string `json:"run"`
	// Profile is the seed's own fault profile in a swarm sweep
	// (Options.Swarm): the rates its faults were drawn at.
	Profile map[string]float64 `json:"profile,omitempty"`
	// ProfileLatency is the seed's own link latency in a swarm sweep.
	ProfileLatency *transport.Latency `json:"profileLatency,omitempty"`
	// Strategy is what the seed ran in a mix sweep (MixPick): random
	// (fixed rates, the sweep's latency), swarm (Profile, ProfileLatency)
	// or pct (the sweep's depth and k, no latency); empty otherwise.
	Strategy runtime.Strategy `json:"seedStrategy,omitempty"`
	// Depth is the PCT depth the seed ran at, when it ran PCT: the
	// sweep's, or, in a mix that names none, its own draw (MixDepth).
	Depth int `json:"depth,omitempty"`
}

func ptr[T any](v T) *T { return &v }

// Which run a failure report describes (Failing.Run).
const (
	RunSeed   = "seed"   // the seed's own run, with the faults it drew
	RunShrunk = "shrunk" // the seed replayed with the shrunk faults only
)

// RunText names the run a failure report describes, for a person.
func (f *Failing) RunText() string {
	if f.Run == RunShrunk {
		return fmt.Sprintf("the shrunk replay (seed %d with %s only)", f.Seed, plural(len(f.Shrunk), "fault"))
	}
	return fmt.Sprintf("seed %d's own run", f.Seed)
}

// Clean reports whether the sweep checked every seed it covers (complete,
// no shard missing), none failed, and it checked at least its minimum share
// of object histories (CheckedEnough, rule C3).
func (s *Summary) Clean() bool { return s.Total == 0 && s.Whole() && s.CheckedEnough() }

// Whole reports whether every seed of the sweep was checked: each shard
// ran to the end and no shard of the split is missing.
func (s *Summary) Whole() bool { return s.Complete && s.missingCount() == 0 }

func (e *Explorer) newSummary() *Summary {
	rates := rateNames(e.opts.Rates)
	s := &Summary{Scenario: e.sc.Name, File: e.sc.File, ScenarioDigest: e.sc.Digest, First: e.opts.First, Seeds: e.opts.Seeds,
		Rates: rates, KeepRules: e.opts.KeepRules, Swarm: e.opts.Swarm, Latency: e.opts.Latency, MaxAmbiguous: e.opts.MaxAmbiguous, MinChecked: max(e.opts.MinChecked, 0),
		Horizon: horizon(e.opts.Horizon, e.sc), RecurringAlarms: e.opts.RecurringAlarms || e.sc.Explore.RecurringAlarms, Interleaving: e.opts.Interleaving,
		NoLinearizability: e.opts.NoLinearizability, NoShrink: e.opts.NoShrink,
		Shards: []Shard{e.opts.Shard}, Violations: []Violation{}, Scheduling: e.sched}
	for ns, c := range e.opts.Classes {
		if c != nil {
			s.Classes = append(s.Classes, ns)
		}
	}
	slices.Sort(s.Classes)
	return s
}

// fingerprintVersion starts the text a fingerprint hashes: a summary of
// another version of the format does not match. Version 2 covered the
// sweep's scenario, rates and options only; version 3 covers every field.
const fingerprintVersion = "dosim explore 3\n"

// fingerprint hashes every field of the summary but the fingerprint: its
// JSON, after one round trip through JSON, so that a summary read back
// from a file hashes as it did when written (the round trip turns what
// JSON cannot hold, such as invalid UTF-8, into what it reads back as).
func (s *Summary) fingerprint() string {
	c := *s
	c.Fingerprint, c.source = "", ""
	data, err := json.Marshal(&c)
	if err == nil {
		var back Summary
		if err = json.Unmarshal(data, &back); err == nil {
			data, err = json.Marshal(&back)
		}
	}
	if err != nil { // a summary dosim made always encodes; one that does not matches nothing
		return "unencodable: " + err.Error()
	}
	sum := sha256.Sum256(append([]byte(fingerprintVersion), data...))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// seal sets the fingerprint, once every field holds its final value.
func (s *Summary) seal() { s.Fingerprint = s.fingerprint() }

// add counts one seed's result, keeping the first MaxViolations
// violations by seed (a seed's own in the order found) whatever order the
// workers finish in.
func (s *Summary) add(r *SeedResult) {
	s.Ran++
	s.addPaths(r.paths)
	s.addFired(r.Faults, r.drops)
	s.Histories += r.Checked
	for why, n := range r.Unchecked {
		if s.Unchecked == nil {
			s.Unchecked = map[string]int{}
		}
		s.Unchecked[why] += n
	}
	if len(r.Violations) == 0 {
		return
	}
	s.Failed++
	s.Total += len(r.Violations)
	at := sort.Search(len(s.Violations), func(i int) bool { return s.Violations[i].Seed > r.Seed })
	if at >= MaxViolations {
		return
	}
	s.Violations = slices.Insert(s.Violations, at, r.Violations...)
	if len(s.Violations) > MaxViolations {
		s.Violations = slices.Delete(s.Violations, MaxViolations, len(s.Violations))
	}
}

// WriteJSON writes the summary as indented JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// ReadSummary reads a summary written by WriteJSON and checks it with
// Validate.
func ReadSummary(r io.Reader) (*Summary, error) { return readSummary("", r) }

// ReadSummaryFile reads the summary file at path; errors name the file.
func ReadSummaryFile(path string) (*Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMerge, err)
	}
	defer f.Close()
	return readSummary(path, f)
}

func readSummary(name string, r io.Reader) (*Summary, error) {
	where := ""
	if name != "" {
		where = name + ": "
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxSummarySize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s%w", ErrMerge, where, err)
	}
	if len(data) > MaxSummarySize {
		return nil, fmt.Errorf("%w: %smore than %d bytes: not a summary written by dosim explore --json", ErrMerge, where, MaxSummarySize)
	}
	var s Summary
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %s%w", ErrMerge, where, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %sdata after the summary: a file holds one JSON object", ErrMerge, where)
	}
	s.source = name
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// ShardRange is a run of consecutive shards From..To (inclusive) of a
// Count-way split.
type ShardRange struct {
	From, To, Count int
}

// String writes the range as I/N, or I-J/N for several shards.
func (r ShardRange) String() string {
	if r.From == r.To {
		return fmt.Sprintf("%d/%d", r.From, r.Count)
	}
	return fmt.Sprintf("%d-%d/%d", r.From, r.To, r.Count)
}

// Len is how many shards the range holds.
func (r ShardRange) Len() int { return r.To - r.From + 1 }

// Missing lists the shards of the split that the summary lacks, as ranges:
// at most one more range than the shards it has, however large the split.
func (s *Summary) Missing() []ShardRange {
	if len(s.Shards) == 0 {
		return nil
	}
	n := s.Shards[0].Count
	have := make([]int, 0, len(s.Shards))
	for _, sh := range s.Shards {
		have = append(have, sh.Index)
	}
	slices.Sort(have)
	have = slices.Compact(have)
	var out []ShardRange
	next := 0
	for _, i := range have {
		if i > next {
			out = append(out, ShardRange{From: next, To: i - 1, Count: n})
		}
		next = max(next, i+1)
	}
	if next < n {
		out = append(out, ShardRange{From: next, To: n - 1, Count: n})
	}
	return out
}

// missingCount is how many shards of the split the summary lacks.
func (s *Summary) missingCount() int {
	if len(s.Shards) == 0 {
		return 0
	}
	seen := make(map[int]bool, len(s.Shards))
	for _, sh := range s.Shards {
		seen[sh.Index] = true
	}
	return max(s.Shards[0].Count-len(seen), 0)
}

// rateNames gives rates by fault name, as a summary holds them.
func rateNames(rates transport.Rates) map[string]float64 {
	out := make(map[string]float64, len(rates))
	for f, r := range rates {
		out[f.String()] = r
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
