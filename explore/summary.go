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
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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
	// MaxAmbiguous, NoLinearizability and NoShrink are the options of the
	// sweep that change its results; Classes names the namespaces run with
	// another constructor than the scenario's.
	MaxAmbiguous      int      `json:"maxAmbiguous"`
	NoLinearizability bool     `json:"noLinearizability,omitempty"`
	NoShrink          bool     `json:"noShrink,omitempty"`
	Classes           []string `json:"classes,omitempty"`
	// Fingerprint is the "sha256:HEX" of the scenario's name and digest, the
	// rates and the options above: shards merge only with the same one.
	Fingerprint string `json:"fingerprint"`
	// Shards are the shards this summary covers.
	Shards []Shard `json:"shards"`
	// Complete says every seed of Shards ran; an interrupted sweep is not
	// complete and has run only the first Ran seeds of its shard.
	Complete bool `json:"complete"`
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
}

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
	rates := map[string]float64{}
	for f, r := range e.opts.Rates {
		rates[f.String()] = r
	}
	s := &Summary{Scenario: e.sc.Name, File: e.sc.File, ScenarioDigest: e.sc.Digest, First: e.opts.First, Seeds: e.opts.Seeds,
		Rates: rates, KeepRules: e.opts.KeepRules, MaxAmbiguous: e.opts.MaxAmbiguous, MinChecked: max(e.opts.MinChecked, 0),
		Horizon: horizon(e.opts.Horizon, e.sc), RecurringAlarms: e.opts.RecurringAlarms || e.sc.Explore.RecurringAlarms,
		NoLinearizability: e.opts.NoLinearizability, NoShrink: e.opts.NoShrink,
		Shards: []Shard{e.opts.Shard}, Violations: []Violation{}}
	for ns, c := range e.opts.Classes {
		if c != nil {
			s.Classes = append(s.Classes, ns)
		}
	}
	slices.Sort(s.Classes)
	s.Fingerprint = s.fingerprint()
	return s
}

// fingerprint hashes what makes two sweeps the same sweep, seeds aside.
func (s *Summary) fingerprint() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "dosim explore 2\nscenario %q\ndigest %q\nrates", s.Scenario, s.ScenarioDigest)
	for _, k := range slices.Sorted(maps.Keys(s.Rates)) {
		fmt.Fprintf(&b, " %q=%s", k, strconv.FormatFloat(s.Rates[k], 'g', -1, 64))
	}
	fmt.Fprintf(&b, "\nkeepRules %t\nmaxAmbiguous %d\nnoLinearizability %t\nnoShrink %t\nclasses %q\nminChecked %s\nhorizon %v\nrecurringAlarms %t\n",
		s.KeepRules, s.MaxAmbiguous, s.NoLinearizability, s.NoShrink, s.Classes, strconv.FormatFloat(s.MinChecked, 'g', -1, 64),
		s.Horizon, s.RecurringAlarms)
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// add counts one seed's result, keeping the first MaxViolations
// violations by seed (a seed's own in the order found) whatever order the
// workers finish in.
func (s *Summary) add(r *SeedResult) {
	s.Ran++
	s.addPaths(r.paths)
	s.addFired(r.Faults)
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

// ErrMerge is wrapped by errors for summaries that cannot be read or
// merged.
var ErrMerge = errors.New("explore merge")

// name is how messages call the summary: its file, else its shards.
func (s *Summary) name() string {
	if s.source != "" {
		return s.source
	}
	names := make([]string, 0, min(len(s.Shards), 4))
	for i, sh := range s.Shards {
		if i == 3 {
			names = append(names, "...")
			break
		}
		names = append(names, sh.String())
	}
	return "summary of shard " + strings.Join(names, ",")
}

// Validate checks that the summary says one consistent thing: every field
// in range, the counts adding up, the violations inside its shards and its
// fingerprint matching its scenario, rates and options. An error names the
// field, its value and what is allowed.
func (s *Summary) Validate() error {
	bad := func(field string, value any, want string, args ...any) error {
		return fmt.Errorf("%w: %s: %q is %v: %s", ErrMerge, s.name(), field, value, fmt.Sprintf(want, args...))
	}
	switch {
	case s.Scenario == "":
		return bad("scenario", `""`, "want the scenario's name")
	case s.ScenarioDigest != "" && !isDigest(s.ScenarioDigest):
		return bad("scenarioDigest", strconv.Quote(s.ScenarioDigest), `want "sha256:" and 64 hex digits`)
	case s.Seeds < 1:
		return bad("seeds", s.Seeds, "want 1 or more")
	case s.First > math.MaxUint64-uint64(s.Seeds-1):
		return bad("first", s.First, "the last seed, first+seeds-1 with seeds %d, overflows a uint64", s.Seeds)
	case len(s.Rates) == 0:
		return bad("rates", "empty", "want a rate per fault, such as {\"lose-response\": 0.04}")
	case s.MaxAmbiguous < 1 || s.MaxAmbiguous > 20:
		return bad("maxAmbiguous", s.MaxAmbiguous, "want 1 to 20")
	case len(s.Shards) == 0:
		return bad("shards", "empty", "want the shards the summary covers, such as [{\"index\": 0, \"count\": 1}]")
	}
	rates := transport.Rates{}
	for name, r := range s.Rates {
		f, err := transport.ParseFault(name)
		if err != nil || f == transport.None {
			return bad("rates", strconv.Quote(name), "not a fault; allowed are %s", faultNames())
		}
		rates[f] = r
	}
	if err := transport.Random(rates).Validate(); err != nil {
		return fmt.Errorf("%w: %s: \"rates\": %w", ErrMerge, s.name(), err)
	}
	if !slices.IsSorted(s.Classes) || len(slices.Compact(slices.Clone(s.Classes))) != len(s.Classes) {
		return bad("classes", s.Classes, "want namespace names, sorted, each once")
	}
	switch {
	case s.Fingerprint == "":
		return bad("fingerprint", `""`, "a summary records its scenario's fingerprint: write it again with this version's dosim explore --json")
	case s.Fingerprint != s.fingerprint():
		return bad("fingerprint", s.Fingerprint, "it does not match the summary's scenario, digest, rates and options (%s): the file was edited or is corrupt", s.fingerprint())
	}
	count := s.Shards[0].Count
	seen := make(map[int]bool, len(s.Shards))
	want := 0
	for _, sh := range s.Shards {
		switch {
		case sh.Count < 1:
			return bad("shards", sh, "a shard's count is %d: want 1 or more", sh.Count)
		case sh.Index < 0 || sh.Index >= sh.Count:
			return bad("shards", sh, "a shard's index is %d: want 0 to %d", sh.Index, sh.Count-1)
		case sh.Count != count:
			return bad("shards", sh, "shards of a %d-way and a %d-way split: want one split", count, sh.Count)
		case seen[sh.Index]:
			return bad("shards", sh, "listed twice: want each shard once")
		}
		seen[sh.Index] = true
		want += shardSeeds(s.Seeds, sh)
	}
	switch {
	case s.Ran < 0 || s.Ran > want:
		return bad("ran", s.Ran, "the shards hold %d seeds: want 0 to %d", want, want)
	case s.Complete && s.Ran != want:
		return bad("ran", s.Ran, "a complete summary of these shards ran all their %d seeds", want)
	case s.Failed < 0 || s.Failed > s.Ran:
		return bad("failed", s.Failed, "want 0 to ran (%d)", s.Ran)
	case s.Total < s.Failed:
		return bad("total", s.Total, "each of the %d failed seeds has a violation: want at least %d", s.Failed, s.Failed)
	case s.Failed == 0 && s.Total != 0:
		return bad("failed", s.Failed, "total is %d: violations come from failed seeds", s.Total)
	case s.Histories < 0:
		return bad("histories", s.Histories, "want 0 or more")
	case len(s.Violations) != min(s.Total, MaxViolations):
		return bad("violations", fmt.Sprintf("%d long", len(s.Violations)), "total is %d: want the first %d", s.Total, min(s.Total, MaxViolations))
	}
	if s.Horizon < 0 {
		return bad("horizon", s.Horizon, "want 0 (liveness off) or a positive duration")
	}
	if !(s.MinChecked >= 0 && s.MinChecked <= 1) {
		return bad("minChecked", s.MinChecked, "want a share from 0 to 1")
	}
	for _, name := range slices.Sorted(maps.Keys(s.Paths)) {
		if pathIndex(name) < 0 {
			return bad("paths", strconv.Quote(name), "not a rule path")
		}
		if s.Paths[name] < 0 {
			return bad("paths."+name, s.Paths[name], "want 0 or more")
		}
	}
	for _, method := range slices.Sorted(maps.Keys(s.Fired)) {
		for name, n := range s.Fired[method] {
			if f, err := transport.ParseFault(name); err != nil || f == transport.None {
				return bad("fired."+method, strconv.Quote(name), "not a fault; allowed are %s", faultNames())
			}
			if n < 0 {
				return bad("fired."+method+"."+name, n, "want 0 or more")
			}
		}
	}
	for _, why := range slices.Sorted(maps.Keys(s.Unchecked)) {
		if !slices.Contains(reasons, why) {
			return bad("unchecked", strconv.Quote(why), "not a reason; allowed are %q", reasons)
		}
		if n := s.Unchecked[why]; n < 0 {
			return bad("unchecked."+why, n, "want 0 or more")
		}
	}
	seeds := 0
	for i, v := range s.Violations {
		field := fmt.Sprintf("violations[%d].seed", i)
		if err := s.checkSeed(field, v.Seed, seen); err != nil {
			return err
		}
		if i > 0 && v.Seed < s.Violations[i-1].Seed {
			return bad(field, v.Seed, "violations are sorted by seed: want at least %d", s.Violations[i-1].Seed)
		}
		if i == 0 || v.Seed != s.Violations[i-1].Seed {
			seeds++
		}
		if !slices.Contains(kinds, v.Kind) {
			return bad(fmt.Sprintf("violations[%d].kind", i), strconv.Quote(v.Kind), "allowed are %s", strings.Join(kinds, ", "))
		}
	}
	switch {
	case seeds > s.Failed:
		return bad("failed", s.Failed, "the violations name %d seeds", seeds)
	case s.Total <= MaxViolations && seeds != s.Failed:
		return bad("failed", s.Failed, "the violations, all kept, name %d seeds", seeds)
	}
	f := s.FirstFailing
	switch {
	case f == nil && s.Complete && s.Total > 0:
		return bad("firstFailing", "missing", "a complete summary with violations shrinks its first failing seed")
	case f == nil:
		return nil
	case s.Total == 0:
		return bad("firstFailing.seed", f.Seed, "no seed failed")
	case s.Complete && f.Seed != s.Violations[0].Seed:
		return bad("firstFailing.seed", f.Seed, "want the lowest failing seed, %d", s.Violations[0].Seed)
	case len(f.Violations) == 0:
		return bad("firstFailing.violations", "empty", "a failing seed has a violation")
	case f.Run != RunSeed && f.Run != RunShrunk:
		return bad("firstFailing.run", strconv.Quote(f.Run), "want %q or %q", RunSeed, RunShrunk)
	}
	return s.checkSeed("firstFailing.seed", f.Seed, seen)
}

// checkSeed says whether seed is one of the summary's shards' seeds.
func (s *Summary) checkSeed(field string, seed uint64, shards map[int]bool) error {
	if seed < s.First || seed-s.First >= uint64(s.Seeds) {
		return fmt.Errorf("%w: %s: %q is %d: want a seed from %d to %d", ErrMerge, s.name(), field, seed, s.First, s.First+uint64(s.Seeds-1))
	}
	count := uint64(s.Shards[0].Count)
	if idx := int((seed - s.First) % count); !shards[idx] {
		return fmt.Errorf("%w: %s: %q is %d: that seed is in shard %d/%d, which the summary does not cover", ErrMerge, s.name(), field, seed, idx, count)
	}
	return nil
}

// reasons are why a history may go unchecked.
var reasons = []string{ReasonCut, ReasonUnreproducible, ReasonOutside, ReasonUnfinished, ReasonNoClass, ReasonStates}

// kinds are the kinds of violation.
var kinds = []string{KindInvariant, KindExpectation, KindLinearizability, KindError, KindFunc, KindLiveness, KindNondeterminism}

func isDigest(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

func faultNames() string {
	var names []string
	for _, f := range transport.Faults() {
		names = append(names, f.String())
	}
	return strings.Join(names, ", ")
}

// Merge combines the summaries of the shards of one sweep: the same
// scenario file, seed range, rates and options (the same fingerprint),
// each shard of one split at most once. Each summary is validated first.
// Shards may be missing or incomplete: the merged summary then says so
// (Missing, Complete) and is not Clean.
func Merge(parts ...*Summary) (*Summary, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no summaries", ErrMerge)
	}
	for i, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("%w: summary %d is nil", ErrMerge, i+1)
		}
		if err := p.Validate(); err != nil {
			return nil, err
		}
	}
	a := parts[0]
	out := &Summary{Scenario: a.Scenario, File: a.File, ScenarioDigest: a.ScenarioDigest, First: a.First, Seeds: a.Seeds,
		Rates: maps.Clone(a.Rates), KeepRules: a.KeepRules, MaxAmbiguous: a.MaxAmbiguous, MinChecked: a.MinChecked,
		Horizon: a.Horizon, RecurringAlarms: a.RecurringAlarms,
		NoLinearizability: a.NoLinearizability, NoShrink: a.NoShrink, Classes: slices.Clone(a.Classes),
		Fingerprint: a.Fingerprint, Complete: true, Violations: []Violation{}}
	owner := map[int]*Summary{}
	for _, p := range parts {
		differ := func(what string, got, want any) error {
			return fmt.Errorf("%w: %s and %s are not shards of one sweep: %s %v, not %v", ErrMerge, p.name(), a.name(), what, got, want)
		}
		switch {
		case p.Scenario != a.Scenario:
			return nil, differ("scenario", strconv.Quote(p.Scenario), strconv.Quote(a.Scenario))
		case p.ScenarioDigest != a.ScenarioDigest:
			return nil, differ("the scenario file's digest (its bytes differ)", p.ScenarioDigest, a.ScenarioDigest)
		case p.First != a.First || p.Seeds != a.Seeds:
			return nil, differ("seeds first+count", fmt.Sprintf("%d+%d", p.First, p.Seeds), fmt.Sprintf("%d+%d", a.First, a.Seeds))
		case !maps.Equal(p.Rates, a.Rates):
			return nil, differ("rates", RatesText(p.Rates), RatesText(a.Rates))
		case p.KeepRules != a.KeepRules:
			return nil, differ("keepRules", p.KeepRules, a.KeepRules)
		case p.MaxAmbiguous != a.MaxAmbiguous:
			return nil, differ("maxAmbiguous", p.MaxAmbiguous, a.MaxAmbiguous)
		case p.NoLinearizability != a.NoLinearizability:
			return nil, differ("noLinearizability", p.NoLinearizability, a.NoLinearizability)
		case p.NoShrink != a.NoShrink:
			return nil, differ("noShrink", p.NoShrink, a.NoShrink)
		case !slices.Equal(p.Classes, a.Classes):
			return nil, differ("classes", p.Classes, a.Classes)
		case p.Fingerprint != a.Fingerprint:
			return nil, differ("fingerprint", p.Fingerprint, a.Fingerprint)
		}
		for _, sh := range p.Shards {
			if n := a.Shards[0].Count; sh.Count != n {
				return nil, fmt.Errorf("%w: %s has shard %s of a %d-way split, %s of a %d-way split: want one split", ErrMerge, p.name(), sh, sh.Count, a.name(), n)
			}
			if o := owner[sh.Index]; o != nil {
				return nil, fmt.Errorf("%w: shard %s appears twice, in %s and in %s: want each shard once", ErrMerge, sh, o.name(), p.name())
			}
			owner[sh.Index] = p
			out.Shards = append(out.Shards, sh)
		}
		// The shards are disjoint, so Ran and Failed stay within Seeds;
		// the other counts are checked for overflow.
		out.Ran += p.Ran
		out.Failed += p.Failed
		var err error
		if out.Histories, err = addCount("histories", out.Histories, p.Histories); err != nil {
			return nil, err
		}
		for name, n := range p.Paths {
			if out.Paths == nil {
				out.Paths = map[string]int{}
			}
			if out.Paths[name], err = addCount("paths."+name, out.Paths[name], n); err != nil {
				return nil, err
			}
		}
		for method, m := range p.Fired {
			if out.Fired == nil {
				out.Fired = map[string]map[string]int{}
			}
			if out.Fired[method] == nil {
				out.Fired[method] = map[string]int{}
			}
			for name, n := range m {
				if out.Fired[method][name], err = addCount("fired."+method+"."+name, out.Fired[method][name], n); err != nil {
					return nil, err
				}
			}
		}
		for why, n := range p.Unchecked {
			if out.Unchecked == nil {
				out.Unchecked = map[string]int{}
			}
			if out.Unchecked[why], err = addCount("unchecked."+why, out.Unchecked[why], n); err != nil {
				return nil, err
			}
		}
		if out.Total, err = addCount("total", out.Total, p.Total); err != nil {
			return nil, err
		}
		out.Complete = out.Complete && p.Complete
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
	if out.Complete && out.FirstFailing != nil && len(out.Violations) > 0 && out.FirstFailing.Seed != out.Violations[0].Seed {
		return nil, fmt.Errorf("%w: the lowest violation is seed %d but the first failing seed is %d: a summary is corrupt", ErrMerge, out.Violations[0].Seed, out.FirstFailing.Seed)
	}
	return out, nil
}

func addCount(field string, a, b int) (int, error) {
	if b > math.MaxInt-a {
		return 0, fmt.Errorf("%w: %q adds up to more than %d", ErrMerge, field, math.MaxInt)
	}
	return a + b, nil
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
