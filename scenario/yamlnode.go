package scenario

// The resolve pass's readers: generic helpers that report what decoding
// kept (decode.go) at the node's line, through parser.errorf, and check
// ranges: a mapping's shape, a list, a string, a name, a number, a
// duration or any value. The scenario's own fields are resolved in
// resolve.go, resolve_calls.go and expect.go.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/quote"
	"go.yaml.in/yaml/v3"
)

// errorf records a problem at node n (line 1 when n is nil).
func (p *parser) errorf(n *yaml.Node, field string, cause error, format string, args ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	if len(p.errs) >= maxErrors {
		if p.more == 0 {
			p.moreLine = line
		}
		p.more++
		return
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...), Err: cause})
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns a YAML decoder error into an *Error. The decoder's
// "line N" is where the enclosing block starts (a stray } on line 10 of a
// list item begun on line 6 says line 6); with the file's data, the line
// the parser stopped on is found and reported instead.
func (p *parser) syntaxError(err error, data []byte) {
	msg := err.Error()
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if data != nil {
			line = problemLine(data, err.Error(), line)
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Field: "yaml", Msg: msg + " (the file is not valid YAML)", Err: err})
}

// problemLine finds the line a YAML syntax error was found on: the first
// line k, from the decoder's line on, such that the file's first k lines
// fail with the same error. Lines before the offending token parse the same
// as in the whole file; once it is in, the same error follows. (A binary
// search: at most 21 parses of a file of at most MaxFileSize.)
func problemLine(data []byte, text string, from int) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	fails := func(k int) bool {
		dec := yaml.NewDecoder(bytes.NewReader(bytes.Join(lines[:k], nil)))
		for {
			var n yaml.Node
			err := dec.Decode(&n)
			if err == nil {
				continue
			}
			return !errors.Is(err, io.EOF) && err.Error() == text
		}
	}
	lo, hi := max(from, 1), len(lines)
	if lo > hi || !fails(hi) {
		return from
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// report reports problems decoding kept.
func (p *parser) report(probs []problem) {
	for _, q := range probs {
		p.errorf(q.n, q.field, nil, "%s", q.msg)
	}
}

// shape reports the problems of a decoded mapping's shape, and whether it
// is a mapping whose fields can be read (false for an absent one).
func (p *parser) shape(f *fields) bool {
	if f == nil {
		return false
	}
	p.report(f.probs)
	return !f.bad
}

// require reports whether field k is given, reporting it missing at the
// node at if it is not.
func (p *parser) require(f *fields, k string, at *yaml.Node) bool {
	if f.get(k) != nil {
		return true
	}
	p.errorf(at, join(f.path, k), nil, "missing: this field is required")
	return false
}

// join appends key k to a field path; a key that is not a plain name is
// quoted, so that a message stays on one line and reads unambiguously.
func join(path, k string) string {
	if !plainKey.MatchString(k) || len(k) > quote.Max {
		k = quote.Q(k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_@+/-][A-Za-z0-9_.@+/-]*$`)

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// kindName says what a node is, for a message: "a list", "an integer (3)".
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "empty (null)"
		case "!!bool":
			return "a bool (" + quote.Cut(n.Value) + ")"
		case "!!int":
			return "an integer (" + quote.Cut(n.Value) + ")"
		case "!!float":
			return "a number (" + quote.Cut(n.Value) + ")"
		}
		return "a string (" + quote.Q(n.Value) + ")"
	}
	return "not a value"
}

// entries reports the problems of a decoded mapping of names (what says
// what its entries are), and whether it is a mapping (false for an absent
// one).
func (p *parser) entries(e *entries, path, what string) bool {
	if e == nil {
		return false
	}
	if e.notMapping != nil {
		p.errorf(e.notMapping, path, nil, "is %s: want a mapping of %s", kindName(e.notMapping), what)
		return false
	}
	p.report(e.probs)
	return true
}

// list reports a decoded list n that is not one (ok false) and says
// whether it is one (false for an absent one).
func (p *parser) list(n *yaml.Node, ok bool, path, what string) bool {
	if n == nil {
		return false
	}
	if !ok {
		rn := resolve(n)
		p.errorf(rn, path, nil, "is %s: want a list of %s", kindName(rn), what)
	}
	return ok
}

// str reads a string. Numbers are accepted as their text (object: 42);
// bools, nulls, lists and mappings are not.
func (p *parser) str(x val[string], path string) (string, bool) {
	if x.n == nil {
		return "", false
	}
	if !x.ok {
		rn := resolve(x.n)
		p.errorf(rn, path, nil, "is %s: want a string", kindName(rn))
		return "", false
	}
	return x.v, true
}

// name reads a non-empty string.
func (p *parser) name(x val[string], path string) (string, bool) {
	v, ok := p.str(x, path)
	if ok && strings.TrimSpace(v) == "" {
		p.errorf(x.n, path, nil, "is empty: want a name")
		return "", false
	}
	return v, ok
}

// integer reads a whole number within [lo, hi].
func (p *parser) integer(x val[int64], path string, lo, hi int) (int, bool) {
	if x.n == nil {
		return 0, false
	}
	rn := resolve(x.n)
	if !x.ok {
		p.errorf(rn, path, nil, "is %s: want an integer from %d to %d", kindName(rn), lo, hi)
		return 0, false
	}
	if x.v < int64(lo) || x.v > int64(hi) {
		p.errorf(rn, path, nil, "%d is out of range: want an integer from %d to %d", x.v, lo, hi)
		return 0, false
	}
	return int(x.v), true
}

// uint reads a seed: a whole number from 0 to 2^64-1.
func (p *parser) uint(x val[uint64], path string) (uint64, bool) {
	if x.n == nil {
		return 0, false
	}
	if !x.ok {
		rn := resolve(x.n)
		p.errorf(rn, path, nil, "is %s: want an integer from 0 to %d", kindName(rn), uint64(math.MaxUint64))
		return 0, false
	}
	return x.v, true
}

// boolean reads true or false.
func (p *parser) boolean(x val[bool], path string) (bool, bool) {
	if x.n == nil {
		return false, false
	}
	if !x.ok {
		rn := resolve(x.n)
		p.errorf(rn, path, nil, "is %s: want true or false", kindName(rn))
		return false, false
	}
	return x.v, true
}

// duration reads a virtual duration such as 250ms or 1.5s (0 is allowed
// bare), from 0 to MaxTime.
func (p *parser) duration(x val[string], path string) (time.Duration, bool) {
	if x.n == nil {
		return 0, false
	}
	rn := resolve(x.n)
	const want = "want a duration such as 0, 250ms, 1.5s or 2m"
	if !x.ok {
		p.errorf(rn, path, nil, "is %s: %s", kindName(rn), want)
		return 0, false
	}
	d, err := time.ParseDuration(x.v)
	if err != nil {
		p.errorf(rn, path, nil, "%s is not a duration: %s", quote.Q(x.v), want)
		return 0, false
	}
	if d < 0 || d > MaxTime {
		p.errorf(rn, path, nil, "%s is out of range: want a duration from 0 to %s", x.v, MaxTime)
		return 0, false
	}
	return d, true
}

// value reads a decoded value of any kind (an argument, an expected
// result).
func (p *parser) value(x anyVal, path string) (any, bool) {
	if x.msg != "" {
		p.errorf(x.n, path, x.err, "cannot be read: %s", x.msg)
		return nil, false
	}
	return x.v, true
}
