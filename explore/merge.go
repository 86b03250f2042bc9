package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
)

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
// in range, the counts adding up, the violations inside its shards, and
// last its fingerprint matching every other field, so that an edit that
// keeps the fields consistent (a shard relabelled 0/3 to 0/1 with its
// "ran" raised to match) is refused too. An error names the field, its
// value and what is allowed.
func (s *Summary) Validate() error {
	if err := s.validateHeader(); err != nil {
		return err
	}
	seen, err := s.validateShards()
	if err != nil {
		return err
	}
	if err := s.validateChecked(); err != nil {
		return err
	}
	if err := s.validateViolations(seen); err != nil {
		return err
	}
	if err := s.validateFirst(seen); err != nil {
		return err
	}
	if err := s.validateExhaustive(); err != nil {
		return err
	}
	return s.validateFingerprint()
}

// validateFingerprint checks the fingerprint against every other field.
func (s *Summary) validateFingerprint() error {
	switch want := s.fingerprint(); {
	case s.Fingerprint == "":
		return s.bad("fingerprint", `""`, "a summary records its scenario's fingerprint: write it again with this version's dosim explore --json")
	case s.Fingerprint != want:
		// The value that would match is not printed: pasted into the file,
		// it would make an edit pass.
		return s.bad("fingerprint", s.Fingerprint, "it does not match the summary's scenario, digest, rates and options, its seeds, shards and counts: "+
			"the file was edited, is corrupt or was written by another version of dosim explore --json: write it again with dosim explore --json")
	}
	return nil
}

// bad is a Validate error: the summary, the field, its value and what is
// allowed.
func (s *Summary) bad(field string, value any, want string, args ...any) error {
	return fmt.Errorf("%w: %s: %s is %s: %s", ErrMerge, s.name(), quote.Q(field), shown(value), fmt.Sprintf(want, args...))
}

// shown writes a field's value for a message: a string as it is (the
// caller quotes what came from the file, quote.Q), anything else printed
// and bounded (quote.Cut), since a list of classes comes from the file too.
func shown(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return quote.Cut(fmt.Sprint(v))
}

// validateHeader checks what the summary ran: scenario, seeds, rates, classes
// and the fingerprint over them.
func (s *Summary) validateHeader() error {
	bad := s.bad
	switch {
	case s.Scenario == "":
		return bad("scenario", `""`, "want the scenario's name")
	case s.ScenarioDigest != "" && !isDigest(s.ScenarioDigest):
		return bad("scenarioDigest", quote.Q(s.ScenarioDigest), `want "sha256:" and 64 hex digits`)
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
			return bad("rates", quote.Q(name), "not a fault; allowed are %s", faultNames())
		}
		rates[f] = r
	}
	if err := transport.Random(rates).Validate(); err != nil {
		return fmt.Errorf("%w: %s: \"rates\": %w", ErrMerge, s.name(), err)
	}
	if err := s.Latency.Validate(); err != nil {
		return fmt.Errorf("%w: %s: \"latency\": %w", ErrMerge, s.name(), err)
	}
	if !slices.IsSorted(s.Classes) || len(slices.Compact(slices.Clone(s.Classes))) != len(s.Classes) {
		return bad("classes", s.Classes, "want namespace names, sorted, each once")
	}
	return nil
}

// validateShards checks the shards, one split each once, and the counts of
// seeds ran and failed against them; it returns the shards' indices.
func (s *Summary) validateShards() (map[int]bool, error) {
	bad := func(field string, value any, want string, args ...any) (map[int]bool, error) {
		return nil, s.bad(field, value, want, args...)
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
	case s.Stopped && (s.Complete || s.Failed == 0):
		return bad("stopped", s.Stopped, "a sweep stops at its first failure before its last seed: want complete false and a failed seed")
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
	return seen, nil
}

// validateChecked checks what the summary says it checked: horizon, share,
// rule paths, faults fired and histories not checked.
func (s *Summary) validateChecked() error {
	bad := s.bad
	if s.Horizon < 0 {
		return bad("horizon", s.Horizon, "want 0 (liveness off) or a positive duration")
	}
	if !(s.MinChecked >= 0 && s.MinChecked <= 1) {
		return bad("minChecked", s.MinChecked, "want a share from 0 to 1")
	}
	for _, name := range slices.Sorted(maps.Keys(s.Paths)) {
		if pathIndex(name) < 0 {
			return bad("paths", quote.Q(name), "not a rule path")
		}
		if s.Paths[name] < 0 {
			return bad("paths."+name, s.Paths[name], "want 0 or more")
		}
	}
	for _, method := range slices.Sorted(maps.Keys(s.Fired)) {
		for name, n := range s.Fired[method] {
			if f, err := transport.ParseFault(name); err != nil || f == transport.None {
				return bad("fired."+method, quote.Q(name), "not a fault; allowed are %s", faultNames())
			}
			if n < 0 {
				return bad("fired."+method+"."+name, n, "want 0 or more")
			}
		}
	}
	for _, why := range slices.Sorted(maps.Keys(s.Unchecked)) {
		if !slices.Contains(reasons, why) {
			return bad("unchecked", quote.Q(why), "not a reason; allowed are %q", reasons)
		}
		if n := s.Unchecked[why]; n < 0 {
			return bad("unchecked."+why, n, "want 0 or more")
		}
	}
	return nil
}

// validateViolations checks the violations kept: sorted, of known kinds, from
// the summary's seeds and as many seeds as failed.
func (s *Summary) validateViolations(seen map[int]bool) error {
	bad := s.bad
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
			return bad(fmt.Sprintf("violations[%d].kind", i), quote.Q(v.Kind), "allowed are %s", strings.Join(kinds, ", "))
		}
	}
	switch {
	case seeds > s.Failed:
		return bad("failed", s.Failed, "the violations name %d seeds", seeds)
	case s.Total <= MaxViolations && seeds != s.Failed:
		return bad("failed", s.Failed, "the violations, all kept, name %d seeds", seeds)
	}
	return nil
}

// validateFirst checks the first failing seed, shrunk: there when it should
// be, the lowest failing seed, with its violations.
func (s *Summary) validateFirst(seen map[int]bool) error {
	bad := s.bad
	f := s.FirstFailing
	switch {
	case f == nil && (s.Complete || s.Stopped) && s.Total > 0:
		return bad("firstFailing", "missing", "a complete summary with violations shrinks its first failing seed")
	case f == nil:
		return nil
	case s.Total == 0:
		return bad("firstFailing.seed", f.Seed, "no seed failed")
	case (s.Complete || s.Stopped) && f.Seed != s.Violations[0].Seed:
		return bad("firstFailing.seed", f.Seed, "want the lowest failing seed, %d", s.Violations[0].Seed)
	case len(f.Violations) == 0:
		return bad("firstFailing.violations", "empty", "a failing seed has a violation")
	case f.Run != RunSeed && f.Run != RunShrunk:
		return bad("firstFailing.run", quote.Q(f.Run), "want %q or %q", RunSeed, RunShrunk)
	}
	return s.checkSeed("firstFailing.seed", f.Seed, seen)
}

// checkSeed says whether seed is one of the summary's shards' seeds.
func (s *Summary) checkSeed(field string, seed uint64, shards map[int]bool) error {
	if seed < s.First || seed-s.First >= uint64(s.Seeds) {
		return fmt.Errorf("%w: %s: %s is %d: want a seed from %d to %d", ErrMerge, s.name(), quote.Q(field), seed, s.First, s.First+uint64(s.Seeds-1))
	}
	count := uint64(s.Shards[0].Count)
	if idx := int((seed - s.First) % count); !shards[idx] {
		return fmt.Errorf("%w: %s: %s is %d: that seed is in shard %d/%d, which the summary does not cover", ErrMerge, s.name(), quote.Q(field), seed, idx, count)
	}
	return nil
}

// reasons are why a history may go unchecked.
var reasons = []string{ReasonCut, ReasonUnreproducible, ReasonOutside, ReasonUnfinished, ReasonNoClass, ReasonStates}

// kinds are the kinds of violation.
var kinds = []string{KindInvariant, KindExpectation, KindLinearizability, KindInterleaving, KindError, KindFunc, KindLiveness, KindNondeterminism}

func isDigest(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

func faultNames() string { return namesOf(transport.Faults()) }

// attemptFaultNames lists the faults a fault set names: those of attempts.
func attemptFaultNames() string { return namesOf(transport.AttemptFaults()) }

// namesOf lists faults by name.
func namesOf(faults []transport.Fault) string {
	names := make([]string, len(faults))
	for i, f := range faults {
		names[i] = f.String()
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
		if p.Exhaustive != nil {
			return nil, fmt.Errorf("%w: %s is an exhaustive search: one tree, not shards of a seed range; merge combines random sweeps only", ErrMerge, p.name())
		}
	}
	a := parts[0]
	out := &Summary{Scenario: a.Scenario, File: a.File, ScenarioDigest: a.ScenarioDigest, First: a.First, Seeds: a.Seeds,
		Rates: maps.Clone(a.Rates), KeepRules: a.KeepRules, Swarm: a.Swarm, Latency: a.Latency, MaxAmbiguous: a.MaxAmbiguous, MinChecked: a.MinChecked,
		Horizon: a.Horizon, RecurringAlarms: a.RecurringAlarms, Interleaving: slices.Clone(a.Interleaving),
		NoLinearizability: a.NoLinearizability, NoShrink: a.NoShrink, Classes: slices.Clone(a.Classes),
		Complete: true, Violations: []Violation{}, Scheduling: a.Scheduling}
	owner := map[int]*Summary{}
	for _, p := range parts {
		if err := sameSweep(p, a); err != nil {
			return nil, err
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
		if err := out.addCounts(p); err != nil {
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
	out.seal()
	return out, nil
}

// CheckScenarioFile reads the scenario file the summary names, when it is
// there, and checks that its bytes are the ones the sweep ran
// (ScenarioDigest): shards of a file changed since describe what it no
// longer says. A summary of a scenario built in code (no digest) or whose
// file is not there (the shards are merged on another machine) is not
// checked; a path there that is not a regular file, or larger than a
// scenario may be, does not match. The error wraps ErrMerge.
func (s *Summary) CheckScenarioFile() error {
	if s.ScenarioDigest == "" || s.File == "" {
		return nil
	}
	st, err := os.Stat(s.File)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%w: %s: the scenario file %s: %w", ErrMerge, s.name(), quote.Path(s.File), err)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w: %s: the scenario file %s is not a regular file, so it is not the one the sweep ran", ErrMerge, s.name(), quote.Path(s.File))
	}
	f, err := os.Open(s.File)
	if err != nil {
		return fmt.Errorf("%w: %s: the scenario file: %w", ErrMerge, s.name(), err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, scenario.MaxFileSize+1)); err != nil {
		return fmt.Errorf("%w: %s: the scenario file: %w", ErrMerge, s.name(), err)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != s.ScenarioDigest {
		return fmt.Errorf("%w: %s: the scenario file %s has changed since the sweep (its digest is %s, the summary's %s): "+
			"the summary describes what the file no longer says; explore it again", ErrMerge, s.name(), quote.Path(s.File), got, s.ScenarioDigest)
	}
	return nil
}

// sameSweep says why p and a are not shards of one sweep, if they are not.
func sameSweep(p, a *Summary) error {
	differ := func(what string, got, want any) error {
		return fmt.Errorf("%w: %s and %s are not shards of one sweep: %s %s, not %s", ErrMerge, p.name(), a.name(), what, shown(got), shown(want))
	}
	switch {
	case p.Scenario != a.Scenario:
		return differ("scenario", quote.Q(p.Scenario), quote.Q(a.Scenario))
	case p.ScenarioDigest != a.ScenarioDigest:
		return differ("the scenario file's digest (its bytes differ)", p.ScenarioDigest, a.ScenarioDigest)
	case p.First != a.First || p.Seeds != a.Seeds:
		return differ("seeds first+count", fmt.Sprintf("%d+%d", p.First, p.Seeds), fmt.Sprintf("%d+%d", a.First, a.Seeds))
	case !maps.Equal(p.Rates, a.Rates):
		return differ("rates", RatesText(p.Rates), RatesText(a.Rates))
	case p.KeepRules != a.KeepRules:
		return differ("keepRules", p.KeepRules, a.KeepRules)
	case p.Swarm != a.Swarm:
		return differ("swarm", p.Swarm, a.Swarm)
	case p.Latency != a.Latency:
		return differ("latency", p.Latency, a.Latency)
	case p.Scheduling != a.Scheduling:
		return differ("strategy", p.Scheduling, a.Scheduling)
	case p.MaxAmbiguous != a.MaxAmbiguous:
		return differ("maxAmbiguous", p.MaxAmbiguous, a.MaxAmbiguous)
	case p.NoLinearizability != a.NoLinearizability:
		return differ("noLinearizability", p.NoLinearizability, a.NoLinearizability)
	case p.NoShrink != a.NoShrink:
		return differ("noShrink", p.NoShrink, a.NoShrink)
	case !slices.Equal(p.Classes, a.Classes):
		return differ("classes", p.Classes, a.Classes)
	case p.MinChecked != a.MinChecked:
		return differ("minChecked", p.MinChecked, a.MinChecked)
	case p.Horizon != a.Horizon:
		return differ("horizon", p.Horizon, a.Horizon)
	case p.RecurringAlarms != a.RecurringAlarms:
		return differ("recurringAlarms", p.RecurringAlarms, a.RecurringAlarms)
	case !slices.Equal(p.Interleaving, a.Interleaving):
		return differ("interleaving", p.Interleaving, a.Interleaving)
	}
	return nil
}

// addCounts adds p's counts (histories, rule paths, faults fired, histories
// not checked, violations) to s's, failing on an overflow.
func (s *Summary) addCounts(p *Summary) error {
	var err error
	if s.Histories, err = addCount("histories", s.Histories, p.Histories); err != nil {
		return err
	}
	if s.Total, err = addCount("total", s.Total, p.Total); err != nil {
		return err
	}
	if s.Paths, err = addCountMap("paths.", s.Paths, p.Paths); err != nil {
		return err
	}
	if s.Unchecked, err = addCountMap("unchecked.", s.Unchecked, p.Unchecked); err != nil {
		return err
	}
	for method, m := range p.Fired {
		if s.Fired == nil {
			s.Fired = map[string]map[string]int{}
		}
		if s.Fired[method], err = addCountMap("fired."+method+".", s.Fired[method], m); err != nil {
			return err
		}
	}
	return nil
}

// addCountMap adds src's counts to dst's (made when src has any), failing
// on an overflow; prefix names dst in the error.
func addCountMap(prefix string, dst, src map[string]int) (map[string]int, error) {
	for name, n := range src {
		if dst == nil {
			dst = map[string]int{}
		}
		var err error
		if dst[name], err = addCount(prefix+name, dst[name], n); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

func addCount(field string, a, b int) (int, error) {
	if b > math.MaxInt-a {
		return 0, fmt.Errorf("%w: %s adds up to more than %d", ErrMerge, quote.Q(field), math.MaxInt)
	}
	return a + b, nil
}
