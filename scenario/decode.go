package scenario

// Decoding: the first of the loader's two passes. A file's YAML node tree
// is decoded into the typed structs below (rawFile and what it holds),
// each value kept beside its node, as the file writes it, for the line of
// a message. Decoding reports nothing: what is not of the kind a field
// reads is kept as such (ok false), and a mapping's shape problems (not a
// mapping, unknown or repeated keys) are kept with it. The second pass
// (resolve.go) walks the structs in one order, reports those problems,
// checks ranges and resolves names (classes, namespaces, stubs, methods).

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// val is a decoded scalar: the node as the file writes it (an alias where
// the file has one; nil when the field is absent) and the value read from
// it, ok when the node is of the kind the field reads.
type val[T any] struct {
	n  *yaml.Node
	v  T
	ok bool
}

// given reports whether the field is in the file.
func (x val[T]) given() bool { return x.n != nil }

// decodeStr reads a string. Numbers are read as their text (object: 42);
// bools, nulls, binaries, lists and mappings are not strings.
func decodeStr(n *yaml.Node) val[string] {
	r := resolve(n)
	if r == nil {
		return val[string]{n: n}
	}
	tag := r.ShortTag()
	ok := r.Kind == yaml.ScalarNode && tag != "!!null" && tag != "!!bool" && tag != "!!binary"
	return val[string]{n: n, v: r.Value, ok: ok}
}

// decodeTagged reads a scalar of YAML tag tag (!!int, !!bool) into T.
func decodeTagged[T any](n *yaml.Node, tag string) val[T] {
	x := val[T]{n: n}
	r := resolve(n)
	if r != nil && r.Kind == yaml.ScalarNode && r.ShortTag() == tag {
		x.ok = r.Decode(&x.v) == nil
	}
	return x
}

func decodeInt(n *yaml.Node) val[int64]   { return decodeTagged[int64](n, "!!int") }
func decodeUint(n *yaml.Node) val[uint64] { return decodeTagged[uint64](n, "!!int") }
func decodeBool(n *yaml.Node) val[bool]   { return decodeTagged[bool](n, "!!bool") }

// decodeRate reads a number (an integer or a float).
func decodeRate(n *yaml.Node) val[float64] {
	x := val[float64]{n: n}
	if r := resolve(n); r != nil && r.Kind == yaml.ScalarNode && (r.ShortTag() == "!!float" || r.ShortTag() == "!!int") {
		x.ok = r.Decode(&x.v) == nil
	}
	return x
}

// decodeDuration reads a duration's text: a string, or a bare 0. Whether
// it parses is checked when it is resolved.
func decodeDuration(n *yaml.Node) val[string] {
	x := val[string]{n: n}
	if r := resolve(n); r != nil {
		x.v = r.Value
		x.ok = r.Kind == yaml.ScalarNode && (r.ShortTag() == "!!str" || r.ShortTag() == "!!int" && r.Value == "0")
	}
	return x
}

// anyVal is a decoded value of any kind (an argument, an expected result),
// or why it cannot be read.
type anyVal struct {
	n   *yaml.Node // as written
	v   any
	msg string // why it cannot be read; "" when it can
	err error
}

// decodeValue decodes any YAML value.
func decodeValue(n *yaml.Node) anyVal {
	x := anyVal{n: n}
	if err := n.Decode(&x.v); err != nil {
		x.msg, x.err = err.Error(), err
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			x.msg = yamlLinePrefix.ReplaceAllString(te.Errors[0], "")
		}
	}
	return x
}

var yamlLinePrefix = regexp.MustCompile(`^line \d+: `)

// problem is a problem decoding found, reported by the resolve pass when
// it reaches the value (parser.report).
type problem struct {
	n     *yaml.Node
	field string
	msg   string
}

// fields is a decoded mapping of known keys: its values by key, and the
// problems of its shape. bad is set when it is not a mapping at all.
type fields struct {
	at    *yaml.Node // the mapping as written
	vals  map[string]*yaml.Node
	path  string
	probs []problem
	bad   bool
}

// get returns the value of key k, nil when it is not given.
func (f *fields) get(k string) *yaml.Node {
	if f == nil {
		return nil
	}
	return f.vals[k]
}

// decodeFields reads n as a mapping whose keys are all in allowed, each
// once; nil when n is nil (the field is absent).
func decodeFields(n *yaml.Node, path string, allowed ...string) *fields {
	at := n
	n = resolve(n)
	if n == nil {
		return nil
	}
	f := &fields{at: at, vals: map[string]*yaml.Node{}, path: path}
	if n.Kind != yaml.MappingNode {
		what := path
		if what == "" {
			what = "file"
		}
		f.bad = true
		f.probs = append(f.probs, problem{n, what, "is " + kindName(n) + ": want a mapping of " + strings.Join(allowed, ", ")})
		return f
	}
	keys := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
			f.probs = append(f.probs, problem{n.Content[i], join(path, "?"), "a key must be a plain name; allowed are " + strings.Join(allowed, ", ")})
		case k.Value == "<<":
			f.probs = append(f.probs, problem{k, join(path, "<<"), "merge keys are not supported; write the fields out"})
		case !slices.Contains(allowed, k.Value):
			f.probs = append(f.probs, problem{k, join(path, k.Value), "unknown field" + didYouMean(k.Value, allowed) + "; allowed are " + strings.Join(allowed, ", ")})
		case keys[k.Value] != nil:
			f.probs = append(f.probs, problem{k, join(path, k.Value), "given twice (first at line " + itoa(keys[k.Value].Line) + "); give each field once"})
		default:
			keys[k.Value] = k
			f.vals[k.Value] = v
		}
	}
	return f
}

// entries is a decoded mapping whose keys the user names (namespaces,
// stubs, resets): its keys and values in order, and the problems of its
// keys. notMapping is the node when it is not a mapping at all.
type entries struct {
	at         *yaml.Node // as written
	keys, vals []*yaml.Node
	probs      []problem
	notMapping *yaml.Node
}

// decodeEntries reads n as a mapping with non-empty, unique plain keys;
// nil when n is nil (the field is absent).
func decodeEntries(n *yaml.Node, path string) *entries {
	e := &entries{at: n}
	n = resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		e.notMapping = n
		return e
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" || k.Value == "" {
			e.probs = append(e.probs, problem{n.Content[i], path, "a key must be a non-empty name"})
			continue
		}
		if first, dup := seen[k.Value]; dup {
			e.probs = append(e.probs, problem{k, join(path, k.Value), "defined twice (first at line " + itoa(first) + "); names must be unique"})
			continue
		}
		seen[k.Value] = k.Line
		e.keys = append(e.keys, k)
		e.vals = append(e.vals, n.Content[i+1])
	}
	return e
}

// list is a decoded sequence: its items, each decoded; ok when n is a
// sequence. content is the node's own item slice (nil for an empty flow
// list).
type list[T any] struct {
	n       *yaml.Node // as written; nil: absent
	items   []T
	content []*yaml.Node
	ok      bool
}

// decodeList reads n as a sequence, each item with item.
func decodeList[T any](n *yaml.Node, item func(n *yaml.Node, i int) T) list[T] {
	l := list[T]{n: n}
	r := resolve(n)
	if r == nil || r.Kind != yaml.SequenceNode {
		return l
	}
	l.ok, l.content = true, r.Content
	for i, c := range r.Content {
		l.items = append(l.items, item(c, i))
	}
	return l
}

// nodes keeps a list's items as they are.
func nodes(n *yaml.Node, _ int) *yaml.Node { return n }

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

func itoa(n int) string { return strconv.Itoa(n) }
