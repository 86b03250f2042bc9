package scenario

// Counts an expectation may bound (rule C7): a field that takes a count
// takes an exact integer, or {min: N}, {max: N} or both.

import (
	"fmt"
	"strconv"
)

// maxCount is the largest count of effects or resets an expectation may
// name.
const maxCount = 1_000_000

// NoMax is Count.Max when a count has no upper bound ({min: N} alone).
const NoMax = -1

// Count is what an expectation wants of a count (rule C7): a whole number
// from Min to Max, both included. An exact count N is Min = Max = N (the
// zero Count expects exactly 0); {max: N} is Min 0, Max N; {min: N} is
// Min N, Max NoMax.
type Count struct {
	Min int // the least the count may be; 0 for no lower bound
	Max int // the most it may be; NoMax for no upper bound
}

// Exactly is the Count of exactly n.
func Exactly(n int) Count { return Count{Min: n, Max: n} }

// AtMost is the Count of at most n: {max: n}.
func AtMost(n int) Count { return Count{Min: 0, Max: n} }

// AtLeast is the Count of at least n: {min: n}.
func AtLeast(n int) Count { return Count{Min: n, Max: NoMax} }

// Holds reports whether n is within the count's bounds.
func (c Count) Holds(n int) bool { return n >= c.Min && (c.Max == NoMax || n <= c.Max) }

// String says what the count expects: "1", "at most 1", "at least 1",
// "1 to 2".
func (c Count) String() string { return c.text(strconv.Itoa) }

// Describe says what the count expects of a unit, for a person:
// "1 attempt", "at most 2 attempts", "at least 1 attempt", "1 to 2
// attempts".
func (c Count) Describe(unit string) string {
	return c.text(func(n int) string { return plural(n, unit) })
}

// text words the count, each number written by num.
func (c Count) text(num func(int) string) string {
	switch {
	case c.Min == c.Max:
		return num(c.Min)
	case c.Max == NoMax:
		return "at least " + num(c.Min)
	case c.Min == 0:
		return "at most " + num(c.Max)
	}
	return fmt.Sprintf("%d to %s", c.Min, num(c.Max))
}

// countOf reads an expectation's Want as a Count; an int, as a scenario
// built in Go may give, is an exact count. It reports false for anything
// else.
func countOf(want any) (Count, bool) {
	switch w := want.(type) {
	case Count:
		return w, true
	case int:
		return Exactly(w), true
	}
	return Count{}, false
}

// count resolves a count field: an integer from lo to hi (exactly that
// many), or a mapping of min, max or both, each from lo to hi, min not
// above max.
func (p *parser) count(c rawCount, path string, lo, hi int) (Count, bool) {
	switch {
	case c.n == nil:
		return Count{}, false
	case c.exact:
		v, ok := p.integer(c.value, path, lo, hi)
		return Exactly(v), ok
	case !c.mapping:
		p.errorf(c.n, path, nil, "is %s: want an integer from %d to %d (exactly that many), or {min: N}, {max: N} or both", kindName(c.n), lo, hi)
		return Count{}, false
	case c.shape == nil:
		p.errorf(c.n, path, nil, "is empty: want {min: N}, {max: N} or both, with N from %d to %d, e.g. {max: 1}", lo, hi)
		return Count{}, false
	}
	p.shape(c.shape)
	if !c.min.given() && !c.max.given() {
		return Count{}, false // only unknown keys, each reported
	}
	out, ok := Count{Min: 0, Max: NoMax}, true
	if c.min.given() {
		out.Min, ok = p.integer(c.min, path+".min", lo, hi)
	}
	if c.max.given() {
		v, good := p.integer(c.max, path+".max", lo, hi)
		out.Max, ok = v, ok && good
	}
	if ok && out.Max != NoMax && out.Min > out.Max {
		p.errorf(c.n, path, nil, "min %d is above max %d: want min at most max, e.g. {min: %d, max: %d}", out.Min, out.Max, out.Max, out.Min)
		return Count{}, false
	}
	return out, ok
}

// checkCount checks a count expectation against n, the count the run
// made; with describe, it also says what was expected and what happened,
// each after prefix: "at most 1 attempt", "2 attempts".
func checkCount(e *Expectation, n int, unit, prefix string, describe bool) (want, got string, met bool) {
	c, ok := countOf(e.Want)
	if !ok {
		return e.Kind, "an expectation dosim cannot check", false
	}
	if !describe {
		return "", "", c.Holds(n)
	}
	return prefix + c.Describe(unit), prefix + plural(n, unit), c.Holds(n)
}
