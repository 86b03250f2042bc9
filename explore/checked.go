package explore

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// What a sweep checked (rule C3): the object histories checked and not,
// by reason; the faults that fired, by method and stage; the rule paths
// the runs took. A sweep says "clean" only when it checked enough of its
// histories (Options.MinChecked).

// DefaultMinChecked is the least share of object histories a sweep must
// check for its report to say clean: below it, a sweep with no violation
// still fails, saying how little it checked. 0.9 fails a sweep that checked
// nothing or little while leaving room for the few histories a fault
// makes uncheckable (too many turns cut short, say); every shipped
// scenario checks all of its histories.
const DefaultMinChecked = 0.9

// The rule paths a sweep counts (Summary.Paths): how many calls took each.
const (
	PathRecovered         = "recovered"          // S3: a retry succeeded
	PathDuplicateRejected = "duplicate-rejected" // S6: a retry refused as a duplicate
	PathMarkedRerun       = "marked-rerun"       // S6: a marked method ran again for one call
	PathDeadline          = "deadline"           // S9: the deadline stopped the retries
	PathExhausted         = "attempts-exhausted" // S2: every allowed attempt failed
	PathNotRetryable      = "not-retryable"      // S4: a failure never retried
	PathNotReplayable     = "not-replayable"     // S11, S12: a request that could not be sent again
	PathBrokenStub        = "broken-stub"        // L2: a call refused by a broken stub
	PathCancelled         = "cancelled"          // S14: the caller's context stopped the call
	PathReset             = "reset"              // L3: an object was reset
	PathLostWrite         = "lost-write"         // L7: a write failure took back a call's writes
)

// paths are the rule paths in the order reports list them, with their rules.
var paths = []struct{ name, rule string }{
	{PathRecovered, "S3"}, {PathDuplicateRejected, "S6"}, {PathMarkedRerun, "S6"}, {PathDeadline, "S9"},
	{PathExhausted, "S2"}, {PathNotRetryable, "S4"}, {PathNotReplayable, "S11"}, {PathBrokenStub, "L2"},
	{PathCancelled, "S14"}, {PathReset, "L3"}, {PathLostWrite, "L7"},
}

// pathCounts are one run's counts of the rule paths, in the order of paths.
type pathCounts [11]int

func pathIndex(name string) int {
	return slices.IndexFunc(paths, func(p struct{ name, rule string }) bool { return p.name == name })
}

// countPaths counts the rule paths a run's calls took; marked says
// whether a call's method is marked Retryable.
func countPaths(calls []runtime.CallRecord, events []object.Event, marked func(c *runtime.CallRecord) bool) pathCounts {
	var pc pathCounts
	add := func(name string) { pc[pathIndex(name)]++ }
	for i := range calls {
		c := &calls[i]
		switch c.Outcome {
		case transport.OutcomeRecovered:
			add(PathRecovered)
		case transport.OutcomeDuplicateRejected:
			add(PathDuplicateRejected)
		case transport.OutcomeTimeout:
			add(PathDeadline)
		case transport.OutcomeAttemptsExhausted:
			add(PathExhausted)
		case transport.OutcomeNotRetryable:
			add(PathNotRetryable)
		case transport.OutcomeNotReplayable:
			add(PathNotReplayable)
		case transport.OutcomeBrokenStub:
			add(PathBrokenStub)
		case transport.OutcomeCancelled:
			add(PathCancelled)
		}
		if c.Outcome != transport.OutcomeDuplicateRejected && c.Rejections() > 0 {
			add(PathDuplicateRejected)
		}
		if c.Executions() > 1 && marked(c) {
			add(PathMarkedRerun)
		}
		for _, a := range c.Attempts {
			if a.LostWrites > 0 {
				add(PathLostWrite)
				break
			}
		}
	}
	for _, e := range events {
		if e.Kind == object.EventReset {
			add(PathReset)
		}
	}
	return pc
}

// addPaths adds a run's path counts to the summary's.
func (s *Summary) addPaths(pc pathCounts) {
	for i, n := range pc {
		if n == 0 {
			continue
		}
		if s.Paths == nil {
			s.Paths = map[string]int{}
		}
		s.Paths[paths[i].name] += n
	}
}

// firedSockets is the key under which Summary.Fired counts the faults
// that struck WebSocket connections, not a method's attempts.
const firedSockets = "websocket"

// countDrops counts the connections a run's fault drop-connection
// dropped.
func countDrops(events []object.Event) int {
	n := 0
	for _, e := range events {
		if e.Kind == object.EventWebSocketDrop {
			n++
		}
	}
	return n
}

// addFired counts the faults a run's attempts met, and the connections
// it dropped (under firedSockets).
func (s *Summary) addFired(faults []transport.Rule, drops int) {
	count := func(method string, f transport.Fault, n int) {
		if s.Fired == nil {
			s.Fired = map[string]map[string]int{}
		}
		m := s.Fired[method]
		if m == nil {
			m = map[string]int{}
			s.Fired[method] = m
		}
		m[f.String()] += n
	}
	for _, f := range faults {
		count(f.Method, f.Fault, 1)
	}
	if drops > 0 {
		count(firedSockets, transport.DropConnection, drops)
	}
}

// UncheckedCount is how many object histories the sweep did not check.
func (s *Summary) UncheckedCount() int {
	n := 0
	for _, k := range s.Unchecked {
		n += k
	}
	return n
}

// CheckedShare is the share of object histories checked, from 0 to 1; 1
// when there were none to check.
func (s *Summary) CheckedShare() float64 {
	all := s.Histories + s.UncheckedCount()
	if all == 0 {
		return 1
	}
	return float64(s.Histories) / float64(all)
}

// minChecked is the floor in force: Options.MinChecked as the summary
// records it (0 when off).
func (s *Summary) minChecked() float64 { return max(s.MinChecked, 0) }

// CheckedEnough reports whether the sweep checked at least its minimum
// share of object histories, and checked some: a sweep that checked none
// of its object histories (or ran with linearizability off) did not check
// what it says, and a sweep with no object history at all checked nothing.
func (s *Summary) CheckedEnough() bool {
	if s.NoLinearizability {
		return true // said so: "linearizability not checked"
	}
	if s.Histories+s.UncheckedCount() == 0 {
		return s.Ran == 0 || s.minChecked() == 0
	}
	return s.CheckedShare() >= s.minChecked()
}

// NeverFired lists the attempt faults the rates name that struck no
// attempt. (A connection fault strikes only where the runs open
// WebSockets; those it struck are counted under "websocket".)
func (s *Summary) NeverFired() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.Rates)) {
		if f, err := transport.ParseFault(name); s.Rates[name] <= 0 || (err == nil && f.OnConnection()) {
			continue
		}
		fired := false
		for _, m := range s.Fired {
			fired = fired || m[name] > 0
		}
		if !fired {
			out = append(out, name)
		}
	}
	return out
}

// WriteChecked writes, for a person, what the sweep checked: the object
// histories checked and not (by reason), the faults that fired by method
// and stage (and those of the rates that never did), and the rule paths
// the runs took.
func (s *Summary) WriteChecked(w io.Writer) {
	all := s.Histories + s.UncheckedCount()
	switch {
	case s.NoLinearizability:
		fmt.Fprintf(w, "%d seeds run; linearizability not checked (--no-linearizability)\n", s.Ran)
	default:
		fmt.Fprintf(w, "%d seeds run; %d of %d object histories checked for linearizability (%s)\n", s.Ran, s.Histories, all, percent(s.CheckedShare()))
		for _, why := range slices.Sorted(maps.Keys(s.Unchecked)) {
			fmt.Fprintf(w, "  not checked: %d, %s\n", s.Unchecked[why], why)
		}
	}
	if len(s.Fired) == 0 {
		fmt.Fprintln(w, "faults fired: none")
	} else {
		fmt.Fprintln(w, "faults fired, by method and stage:")
		for _, method := range slices.Sorted(maps.Keys(s.Fired)) {
			fmt.Fprintf(w, "  %s: %s\n", render.Escape(method), firedText(s.Fired[method]))
		}
	}
	if never := s.NeverFired(); len(never) > 0 {
		fmt.Fprintf(w, "  never fired, though the rates name them: %s\n", strings.Join(never, ", "))
	}
	var taken []string
	for _, p := range paths {
		if n := s.Paths[p.name]; n > 0 {
			taken = append(taken, fmt.Sprintf("%s %d (%s)", p.name, n, p.rule))
		}
	}
	if len(taken) == 0 {
		taken = append(taken, "none (every call succeeded at its first attempt)")
	}
	fmt.Fprintf(w, "rule paths: %s\n", strings.Join(taken, ", "))
}

// firedText is one method's fired faults grouped by stage.
func firedText(m map[string]int) string {
	byStage := map[transport.Stage][]string{}
	var stages []transport.Stage
	for _, name := range slices.Sorted(maps.Keys(m)) {
		f, err := transport.ParseFault(name)
		if err != nil {
			continue
		}
		st := f.Stage()
		if _, ok := byStage[st]; !ok {
			stages = append(stages, st)
		}
		byStage[st] = append(byStage[st], fmt.Sprintf("%s %d", name, m[name]))
	}
	slices.Sort(stages)
	parts := make([]string, len(stages))
	for i, st := range stages {
		parts[i] = fmt.Sprintf("%s: %s", stageWords(st), strings.Join(byStage[st], ", "))
	}
	return strings.Join(parts, "; ")
}

// stageWords names a stage in a report.
func stageWords(st transport.Stage) string {
	if st == transport.Nowhere {
		return "at a write"
	}
	return st.String()
}

// percent writes a share as a whole percentage, but never rounds a share
// below 1 up to 100%.
func percent(f float64) string {
	p := int(f*100 + 0.5)
	if p == 100 && f < 1 {
		p = 99
	}
	return fmt.Sprintf("%d%%", p)
}

// NotCheckedEnough says why a sweep with no violation is not clean: it
// checked too few of its object histories; "" when it checked enough.
func (s *Summary) NotCheckedEnough() string {
	if s.CheckedEnough() {
		return ""
	}
	all := s.Histories + s.UncheckedCount()
	if all == 0 {
		return "no violation found, but no object history was checked: no call ran an object's code"
	}
	return fmt.Sprintf("no violation found, but only %d of %d object histories were checked (%s, below the minimum of %s)",
		s.Histories, all, percent(s.CheckedShare()), percent(s.minChecked()))
}

// marksOfCall adapts a namespace -> method -> marked table to countPaths.
func marksOfCall(marks map[string]map[string]bool) func(c *runtime.CallRecord) bool {
	return func(c *runtime.CallRecord) bool { return marks[c.Namespace][c.Method] }
}
