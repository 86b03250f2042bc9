package explore

import (
	"fmt"
	"strings"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
)

// The determinism self-check (Options.CheckDeterminism): a seed runs twice
// and the two runs must be the same, byte for byte (rule D1). Object code
// that reads the wall clock, ranges over a map into what it stores or
// answers, draws from an unseeded source or lets a goroutine race makes
// them differ; the report names the first line that does.

// determinismSample is how often, besides the failing seeds, a sweep with
// CheckDeterminism runs a seed twice: every 64th.
const determinismSample = 64

// sampled reports whether a sweep with CheckDeterminism runs seed twice
// although it did not fail.
func sampled(seed uint64) bool { return seed%determinismSample == 0 }

// runText is all a run did, as text to compare byte for byte: its trace
// (calls, attempts, effects, events), each call's result and the objects'
// storage at the end.
func runText(trace string, calls []runtime.CallRecord, storage []render.Object) string {
	var b strings.Builder
	b.WriteString(trace)
	for i, c := range calls {
		fmt.Fprintf(&b, "result %d %s\n", i+1, canonical(c.Result))
	}
	for _, o := range storage {
		fmt.Fprintf(&b, "storage %s/%s %s\n", o.Namespace, o.Object, canonical(o.Data))
	}
	return b.String()
}

// differs compares two runs of one seed and returns the violation that
// reports their first difference, if they differ.
func differs(seed uint64, first, second string) (Violation, bool) {
	if first == second {
		return Violation{}, false
	}
	a, b := strings.Split(first, "\n"), strings.Split(second, "\n")
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	line := func(ls []string) string {
		if n < len(ls) {
			return shorten(ls[n], 200)
		}
		return "(the end of the run)"
	}
	return Violation{Seed: seed, Kind: KindNondeterminism, Message: fmt.Sprintf(
		"the seed ran twice and the runs differ at line %d: first %q, then %q: object code reads something the seed does not decide (time.Now, a map's order, math/rand, a goroutine)",
		n+1, line(a), line(b))}, true
}

// shorten cuts s to at most n bytes, saying so.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
