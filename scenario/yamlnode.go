package scenario

// The YAML node readers: generic helpers that check a yaml.Node and read
// it as a mapping of known fields, a list, a string, a number, a duration
// or any value, reporting each problem at the node's line through
// parser.errorf. The scenario's own fields are read in parse.go.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
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

// fields is a checked mapping: its values by key, and the key nodes.
type fields struct {
	vals map[string]*yaml.Node
	keys map[string]*yaml.Node
	path string
}

func (f *fields) get(k string) *yaml.Node {
	if f == nil {
		return nil
	}
	return f.vals[k]
}

// require returns field k, reporting it missing if it is not there.
func (f *fields) require(p *parser, k string, at *yaml.Node) *yaml.Node {
	if n := f.get(k); n != nil {
		return n
	}
	p.errorf(at, join(f.path, k), nil, "missing: this field is required")
	return nil
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

// mapping checks that n is a mapping whose keys are all in allowed, each
// once, and returns its fields; nil after reporting a problem.
func (p *parser) mapping(n *yaml.Node, path string, allowed ...string) *fields {
	n = resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		what := path
		if what == "" {
			what = "file"
		}
		p.errorf(n, what, nil, "is %s: want a mapping of %s", kindName(n), strings.Join(allowed, ", "))
		return nil
	}
	f := &fields{vals: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}, path: path}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			p.errorf(n.Content[i], join(path, "?"), nil, "a key must be a plain name; allowed are %s", strings.Join(allowed, ", "))
			continue
		}
		if k.Value == "<<" {
			p.errorf(k, join(path, "<<"), nil, "merge keys are not supported; write the fields out")
			continue
		}
		if !slices.Contains(allowed, k.Value) {
			p.errorf(k, join(path, k.Value), nil, "unknown field; allowed are %s", strings.Join(allowed, ", "))
			continue
		}
		if first, dup := f.keys[k.Value]; dup {
			p.errorf(k, join(path, k.Value), nil, "given twice (first at line %d); give each field once", first.Line)
			continue
		}
		f.keys[k.Value] = k
		f.vals[k.Value] = v
	}
	return f
}

// entries checks that n is a mapping with plain keys and returns them in
// order (for maps whose keys the user names: namespaces, stubs).
func (p *parser) entries(n *yaml.Node, path, what string) (keys []*yaml.Node, vals []*yaml.Node) {
	n = resolve(n)
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, nil, "is %s: want a mapping of %s", kindName(n), what)
		return nil, nil
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" || k.Value == "" {
			p.errorf(n.Content[i], path, nil, "a key must be a non-empty name")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			p.errorf(k, join(path, k.Value), nil, "defined twice (first at line %d); names must be unique", first)
			continue
		}
		seen[k.Value] = k.Line
		keys = append(keys, k)
		vals = append(vals, n.Content[i+1])
	}
	return keys, vals
}

// hasKey reports whether n is a mapping with the key k.
func hasKey(n *yaml.Node, k string) bool {
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if kn := resolve(n.Content[i]); kn != nil && kn.Kind == yaml.ScalarNode && kn.Value == k {
			return true
		}
	}
	return false
}

// seq checks that n is a list and returns its items.
func (p *parser) seq(n *yaml.Node, path, what string) ([]*yaml.Node, bool) {
	n = resolve(n)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, path, nil, "is %s: want a list of %s", kindName(n), what)
		return nil, false
	}
	return n.Content, true
}

// str reads a string. Numbers are accepted as their text (object: 42);
// bools, nulls, lists and mappings are not.
func (p *parser) str(n *yaml.Node, path string) (string, bool) {
	n = resolve(n)
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" || n.ShortTag() == "!!bool" || n.ShortTag() == "!!binary" {
		p.errorf(n, path, nil, "is %s: want a string", kindName(n))
		return "", false
	}
	return n.Value, true
}

// name reads a non-empty string.
func (p *parser) name(n *yaml.Node, path string) (string, bool) {
	v, ok := p.str(n, path)
	if ok && strings.TrimSpace(v) == "" {
		p.errorf(n, path, nil, "is empty: want a name")
		return "", false
	}
	return v, ok
}

// integer reads a whole number within [lo, hi].
func (p *parser) integer(n *yaml.Node, path string, lo, hi int) (int, bool) {
	n = resolve(n)
	if n == nil {
		return 0, false
	}
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		p.errorf(n, path, nil, "is %s: want an integer from %d to %d", kindName(n), lo, hi)
		return 0, false
	}
	if v < int64(lo) || v > int64(hi) {
		p.errorf(n, path, nil, "%d is out of range: want an integer from %d to %d", v, lo, hi)
		return 0, false
	}
	return int(v), true
}

// uint reads a seed: a whole number from 0 to 2^64-1.
func (p *parser) uint(n *yaml.Node, path string) (uint64, bool) {
	n = resolve(n)
	if n == nil {
		return 0, false
	}
	var v uint64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		p.errorf(n, path, nil, "is %s: want an integer from 0 to %d", kindName(n), uint64(math.MaxUint64))
		return 0, false
	}
	return v, true
}

// boolean reads true or false.
func (p *parser) boolean(n *yaml.Node, path string) (bool, bool) {
	n = resolve(n)
	if n == nil {
		return false, false
	}
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		p.errorf(n, path, nil, "is %s: want true or false", kindName(n))
		return false, false
	}
	return v, true
}

// duration reads a virtual duration such as 250ms or 1.5s (0 is allowed
// bare), from 0 to MaxTime.
func (p *parser) duration(n *yaml.Node, path string) (time.Duration, bool) {
	n = resolve(n)
	if n == nil {
		return 0, false
	}
	const want = "want a duration such as 0, 250ms, 1.5s or 2m"
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && !(n.ShortTag() == "!!int" && n.Value == "0")) {
		p.errorf(n, path, nil, "is %s: %s", kindName(n), want)
		return 0, false
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		p.errorf(n, path, nil, "%s is not a duration: %s", quote.Q(n.Value), want)
		return 0, false
	}
	if d < 0 || d > MaxTime {
		p.errorf(n, path, nil, "%s is out of range: want a duration from 0 to %s", n.Value, MaxTime)
		return 0, false
	}
	return d, true
}

// value decodes any YAML value (an argument, an expected result).
func (p *parser) value(n *yaml.Node, path string) (any, bool) {
	var v any
	if err := n.Decode(&v); err != nil {
		msg := err.Error()
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = yamlLinePrefix.ReplaceAllString(te.Errors[0], "")
		}
		p.errorf(n, path, err, "cannot be read: %s", msg)
		return nil, false
	}
	return v, true
}

var yamlLinePrefix = regexp.MustCompile(`^line \d+: `)
