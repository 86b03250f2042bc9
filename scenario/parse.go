package scenario

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"go.yaml.in/yaml/v3"
)

// Limits on what a scenario may ask for.
const (
	// MaxFileSize is the largest scenario file Load and Parse accept.
	MaxFileSize = 1 << 20
	// MaxOuter is the largest application loop a call may have.
	MaxOuter = 100
	// MaxTime is the latest virtual time a call may be set at, and the
	// longest sleep or link delay.
	MaxTime = time.Hour
	// maxErrors is how many problems are reported per file.
	maxErrors = 20
)

// Outcomes lists the names of the call outcomes an expectation may name
// (rule D2), as runtime.Outcomes defines them.
var Outcomes = func() []string {
	var names []string
	for _, o := range runtime.Outcomes() {
		names = append(names, o.String())
	}
	return names
}()

// Load reads and parses the scenario file at path.
func Load(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: reading %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse parses a scenario. name is the file name used in messages and as
// the default scenario name. Every problem found is an *Error; the returned
// error is then an Errors.
func Parse(name string, data []byte) (*Scenario, error) {
	p := &parser{file: name}
	s := p.parse(data)
	if p.more > 0 {
		p.errs = append(p.errs, &Error{File: name, Line: p.moreLine, Field: "file",
			Msg: fmt.Sprintf("... and %d more (only the first %d problems are listed; the next is on this line)", p.more, maxErrors)})
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return s, nil
}

// digest is "sha256:" and the hex SHA-256 of a scenario file's bytes.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// parser walks the YAML node tree, checking every field.
type parser struct {
	file string
	errs Errors
	// more counts the problems found past the first maxErrors, and
	// moreLine is where the first of them is.
	more, moreLine int
	s              *Scenario

	namespaces map[string]*Namespace
	stubs      map[string]*Stub
	objects    map[string]bool // object names of the stubs
	// Names defined with a problem already reported: references to them
	// report nothing more.
	brokenNS, brokenStubs map[string]bool
}

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

func (p *parser) parse(data []byte) *Scenario {
	base := strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file))
	p.s = &Scenario{Name: base, File: p.file, Seed: runtime.DefaultSeed, Digest: digest(data)}
	p.namespaces, p.stubs, p.objects = map[string]*Namespace{}, map[string]*Stub{}, map[string]bool{}
	p.brokenNS, p.brokenStubs = map[string]bool{}, map[string]bool{}
	if len(data) > MaxFileSize {
		p.errorf(nil, "file", nil, "%d bytes: a scenario may be at most %d bytes", len(data), MaxFileSize)
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.errorf(nil, "file", nil, "empty: a scenario is a mapping with namespaces, stubs and calls (see docs/scenarios.md)")
		} else {
			p.syntaxError(err, data)
		}
		return nil
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		p.errorf(&more, "file", nil, "a second YAML document: a scenario file holds one document")
		return nil
	} else if !errors.Is(err, io.EOF) {
		p.syntaxError(err, data)
		return nil
	}
	// Decoding the whole tree once bounds alias expansion (a "billion
	// laughs" file is refused here) before the walk below follows aliases.
	// (Type errors, such as a key given twice, are reported by the walk.)
	var probe any
	var typeErr *yaml.TypeError
	if err := doc.Decode(&probe); err != nil && !errors.As(err, &typeErr) {
		p.syntaxError(err, nil)
		return nil
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	f := p.mapping(root, "", "name", "description", "seed", "namespaces", "stubs", "faults", "calls", "expect", "explore")
	if f == nil {
		return nil
	}
	if n := f.get("name"); n != nil {
		if v, ok := p.str(n, "name"); ok && v != "" {
			p.s.Name = v
		}
	}
	if n := f.get("description"); n != nil {
		p.s.Description, _ = p.str(n, "description")
	}
	if n := f.get("seed"); n != nil {
		if v, ok := p.uint(n, "seed"); ok {
			p.s.Seed = v
		}
	}
	p.parseNamespaces(f.require(p, "namespaces", root))
	p.parseStubs(f.require(p, "stubs", root))
	if n := f.get("faults"); n != nil {
		p.parseFaults(n)
	}
	p.parseCalls(f.require(p, "calls", root))
	if n := f.get("expect"); n != nil {
		p.parseEnd(n)
	}
	if n := f.get("explore"); n != nil {
		p.parseExplore(n)
	}
	return p.s
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
	if !plainKey.MatchString(k) {
		k = strconv.Quote(k)
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
			return "a bool (" + n.Value + ")"
		case "!!int":
			return "an integer (" + n.Value + ")"
		case "!!float":
			return "a number (" + n.Value + ")"
		}
		return fmt.Sprintf("a string (%q)", n.Value)
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
		p.errorf(n, path, nil, "%q is not a duration: %s", n.Value, want)
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

// classInfo is what a class's probe instance says about it.
type classInfo struct {
	methods object.Methods
	fetch   bool
}

// probeClasses builds one instance of each built-in class, with a bare
// State, to learn its methods and whether it serves fetch.
var probeClasses = sync.OnceValue(func() map[string]classInfo {
	out := map[string]classInfo{}
	for _, c := range examples.Classes() {
		inst := c.New(new(object.State))
		_, fetch := inst.(http.Handler)
		out[c.Name] = classInfo{methods: inst.Methods(), fetch: fetch}
	}
	return out
})

func (p *parser) parseNamespaces(n *yaml.Node) {
	if n == nil {
		return
	}
	keys, vals := p.entries(n, "namespaces", "NAME: class (one of "+strings.Join(examples.ClassNames(), ", ")+")")
	if keys == nil && resolve(n).Kind == yaml.MappingNode {
		p.errorf(n, "namespaces", nil, "is empty: define at least one, as NAME: class (one of %s)", strings.Join(examples.ClassNames(), ", "))
	}
	for i, k := range keys {
		path := join("namespaces", k.Value)
		p.brokenNS[k.Value] = true // until it is defined
		cname, ok := p.name(vals[i], path)
		if !ok {
			continue
		}
		cls, ok := examples.LookupClass(cname)
		if !ok {
			p.errorf(vals[i], path, nil, "unknown class %q; the built-in classes are %s", cname, strings.Join(examples.ClassNames(), ", "))
			continue
		}
		delete(p.brokenNS, k.Value)
		info := probeClasses()[cls.Name]
		ns := &Namespace{Name: k.Value, Class: cls, Line: k.Line, methods: info.methods, fetch: info.fetch}
		p.namespaces[ns.Name] = ns
		p.s.Namespaces = append(p.s.Namespaces, ns)
	}
}

func (p *parser) namespaceNames() string {
	names := make([]string, len(p.s.Namespaces))
	for i, ns := range p.s.Namespaces {
		names[i] = ns.Name
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

func (p *parser) stubNames() string {
	names := make([]string, len(p.s.Stubs))
	for i, s := range p.s.Stubs {
		names[i] = s.Name
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// lookupNamespace resolves a namespace reference.
func (p *parser) lookupNamespace(n *yaml.Node, path string) (*Namespace, bool) {
	name, ok := p.name(n, path)
	if !ok {
		return nil, false
	}
	ns := p.namespaces[name]
	if ns == nil {
		if !p.brokenNS[name] {
			p.errorf(n, path, nil, "unknown namespace %q; defined are %s", name, p.namespaceNames())
		}
		return nil, false
	}
	return ns, true
}

func (p *parser) parseStubs(n *yaml.Node) {
	if n == nil {
		return
	}
	keys, vals := p.entries(n, "stubs", "NAME: {namespace, object, options}")
	if keys == nil && resolve(n).Kind == yaml.MappingNode {
		p.errorf(n, "stubs", nil, "is empty: define at least one, as NAME: {namespace: NS, object: NAME}")
	}
	for i, k := range keys {
		path := join("stubs", k.Value)
		p.brokenStubs[k.Value] = true // until it is defined
		f := p.mapping(vals[i], path, "namespace", "object", "options")
		if f == nil {
			continue
		}
		st := &Stub{Name: k.Value, Object: k.Value, Line: k.Line, MaxRetries: stub.DefaultMaxRetries, TimeoutMs: stub.DefaultTimeoutMs}
		if nn := f.get("namespace"); nn != nil {
			ns, ok := p.lookupNamespace(nn, path+".namespace")
			if !ok {
				continue
			}
			st.Namespace = ns
		} else if len(p.s.Namespaces) == 1 {
			st.Namespace = p.s.Namespaces[0]
		} else {
			// With no namespace defined, the namespaces' problem is reported.
			if len(p.s.Namespaces) > 1 {
				p.errorf(k, path+".namespace", nil, "missing: with more than one namespace, say which; defined are %s", p.namespaceNames())
			}
			continue
		}
		if on := f.get("object"); on != nil {
			if v, ok := p.name(on, path+".object"); ok {
				st.Object = v
			}
		}
		if on := f.get("options"); on != nil {
			// A stub with a bad option is still defined, so that the calls
			// through it are checked too; the problem is reported.
			p.parseOptions(on, path+".options", st)
		}
		delete(p.brokenStubs, st.Name)
		p.stubs[st.Name] = st
		p.objects[st.Object] = true
		p.s.Stubs = append(p.s.Stubs, st)
	}
}

// parseOptions reads a stub's options through stub.ParseOptions, one key at
// a time so that each problem has its line.
func (p *parser) parseOptions(n *yaml.Node, path string, st *Stub) {
	f := p.mapping(n, path, "maxRetries", "timeoutMs")
	if f == nil {
		return
	}
	for _, k := range []string{"maxRetries", "timeoutMs"} {
		vn := f.get(k)
		if vn == nil {
			continue
		}
		if rn := resolve(vn); rn.Kind != yaml.ScalarNode {
			lo, hi := stub.MinMaxRetries, stub.MaxMaxRetries
			if k == "timeoutMs" {
				lo, hi = stub.MinTimeoutMs, stub.MaxTimeoutMs
			}
			p.errorf(vn, path+"."+k, stub.ErrType, "%s is of the wrong type: must be a number, an integer from %d to %d", kindName(rn), lo, hi)
			continue
		}
		v, ok := p.value(vn, path+"."+k)
		if !ok {
			continue
		}
		opts, err := stub.ParseOptions(map[string]any{k: v})
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "stub option "+k+": ")
			p.errorf(vn, path+"."+k, err, "%s", msg)
			continue
		}
		st.Options = append(st.Options, opts...)
		n := toInt(v)
		if k == "maxRetries" {
			st.MaxRetries = n
		} else {
			st.TimeoutMs = n
		}
	}
}

// toInt converts a number stub.ParseOptions accepted.
func toInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case uint64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

// methodNames lists the methods of the namespaces' classes (of one
// namespace when ns is set), and "fetch" where a class serves it.
func (p *parser) methodNames(ns *Namespace) []string {
	set := map[string]bool{}
	for _, n := range p.s.Namespaces {
		if ns != nil && n != ns {
			continue
		}
		for m := range n.methods {
			set[m] = true
		}
		if n.fetch {
			set["fetch"] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func (p *parser) parseFaults(n *yaml.Node) {
	f := p.mapping(n, "faults", "rules", "random")
	if f == nil {
		return
	}
	if rn := f.get("rules"); rn != nil {
		items, _ := p.seq(rn, "faults.rules", "rules {namespace, object, method, attempt, fault, delay}")
		for i, item := range items {
			if r, ok := p.parseRule(item, fmt.Sprintf("faults.rules[%d]", i)); ok {
				p.s.Faults.Rules = append(p.s.Faults.Rules, r)
			}
		}
	}
	if rn := f.get("random"); rn != nil {
		p.parseRates(rn)
	}
}

func (p *parser) parseRule(n *yaml.Node, path string) (transport.Rule, bool) {
	var r transport.Rule
	f := p.mapping(n, path, "namespace", "object", "method", "call", "attempt", "fault", "delay")
	if f == nil {
		return r, false
	}
	ok := true
	var ns *Namespace
	if nn := f.get("namespace"); nn != nil {
		if ns, ok = p.lookupNamespace(nn, path+".namespace"); ok {
			r.Namespace = ns.Name
		}
	}
	if on := f.get("object"); on != nil {
		v, good := p.name(on, path+".object")
		switch {
		case !good:
			ok = false
		case !p.objects[v]:
			p.errorf(on, path+".object", nil, "%q is not the object of any stub; the stubs' objects are %s", v, strings.Join(slices.Sorted(maps.Keys(p.objects)), ", "))
			ok = false
		default:
			r.Object = v
		}
	}
	if mn := f.get("method"); mn != nil {
		v, good := p.name(mn, path+".method")
		names := p.methodNames(ns)
		switch {
		case !good:
			ok = false
		case !slices.Contains(names, v):
			where := "the namespaces' classes have"
			if ns != nil {
				where = fmt.Sprintf("namespace %s (class %s) has", ns.Name, ns.Class.Name)
			}
			p.errorf(mn, path+".method", nil, "unknown method %q; %s %s", v, where, strings.Join(names, ", "))
			ok = false
		default:
			r.Method = v
		}
	}
	if cn := f.get("call"); cn != nil {
		v, good := p.integer(cn, path+".call", 1, 1_000_000)
		ok = ok && good
		r.Call = v
	}
	if an := f.get("attempt"); an != nil {
		v, good := p.integer(an, path+".attempt", 1, stub.MaxMaxRetries+1)
		ok = ok && good
		r.Attempt = v
	}
	if fn := f.get("fault"); fn != nil {
		v, good := p.name(fn, path+".fault")
		if good {
			fault, err := transport.ParseFault(v)
			if err != nil {
				p.errorf(fn, path+".fault", err, "unknown fault %q; allowed are %s", v, faultNames(true))
				good = false
			}
			r.Fault = fault
		}
		ok = ok && good
	}
	if dn := f.get("delay"); dn != nil {
		v, good := p.duration(dn, path+".delay")
		ok = ok && good
		r.Delay = v
	}
	if ok && f.get("fault") == nil && f.get("delay") == nil {
		p.errorf(n, path, nil, "a rule needs a fault, a delay or both")
		ok = false
	}
	return r, ok
}

// faultNames lists the fault names; with none, "none" too.
func faultNames(none bool) string {
	var names []string
	if none {
		names = append(names, transport.None.String())
	}
	for _, f := range transport.Faults() {
		names = append(names, f.String())
	}
	return strings.Join(names, ", ")
}

func (p *parser) parseRates(n *yaml.Node) {
	if rates := p.rates(n, "faults.random"); len(rates) > 0 {
		p.s.Faults.Rates = rates
	}
}

// rates reads a FAULT: rate mapping at path.
func (p *parser) rates(n *yaml.Node, at string) transport.Rates {
	keys, vals := p.entries(n, at, "FAULT: rate (a number from 0 to 1)")
	rates := transport.Rates{}
	sum := 0.0
	for i, k := range keys {
		path := join(at, k.Value)
		fault, err := transport.ParseFault(k.Value)
		if err != nil || fault == transport.None {
			p.errorf(k, path, err, "unknown fault %q; allowed are %s", k.Value, faultNames(false))
			continue
		}
		vn := resolve(vals[i])
		var r float64
		if vn.Kind != yaml.ScalarNode || (vn.ShortTag() != "!!float" && vn.ShortTag() != "!!int") || vn.Decode(&r) != nil {
			p.errorf(vn, path, nil, "is %s: want a rate, a number from 0 to 1", kindName(vn))
			continue
		}
		if !(r >= 0 && r <= 1) {
			p.errorf(vn, path, nil, "%s is out of range: want a number from 0 to 1", vn.Value)
			continue
		}
		rates[fault] = r
		sum += r
	}
	if sum > 1+1e-9 {
		p.errorf(n, at, nil, "the rates add up to %g: they may add up to at most 1", sum)
		return nil
	}
	return rates
}

// parseExplore reads what dosim explore uses: its random fault rates and
// the expectations that must hold under any faults.
func (p *parser) parseExplore(n *yaml.Node) {
	f := p.mapping(n, "explore", "random", "expect")
	if f == nil {
		return
	}
	if rn := f.get("random"); rn != nil {
		p.s.Explore.Rates = p.rates(rn, "explore.random")
	}
	if en := f.get("expect"); en != nil {
		p.parseEndInto(en, "explore.expect", &p.s.Explore.Expect)
	}
}

func (p *parser) parseCalls(n *yaml.Node) {
	if n == nil {
		return
	}
	items, ok := p.seq(n, "calls", "calls {stub, method, args, ...}, concurrent blocks and sleeps")
	if ok && len(items) == 0 {
		p.errorf(n, "calls", nil, "is empty: list at least one call")
	}
	for i, item := range items {
		path := fmt.Sprintf("calls[%d]", i)
		item = resolve(item)
		step := &Step{Line: item.Line}
		switch {
		case hasKey(item, "concurrent"):
			f := p.mapping(item, path, "concurrent")
			if f == nil {
				continue
			}
			step.Concurrent = true
			subs, _ := p.seq(f.get("concurrent"), path+".concurrent", "calls {stub, method, args, ...}")
			if subs != nil && len(subs) == 0 {
				p.errorf(f.get("concurrent"), path+".concurrent", nil, "is empty: list the calls to make together")
			}
			for j, sub := range subs {
				if c := p.parseCall(sub, fmt.Sprintf("%s.concurrent[%d]", path, j)); c != nil {
					step.Calls = append(step.Calls, c)
				}
			}
		case hasKey(item, "sleep"):
			f := p.mapping(item, path, "sleep")
			if f == nil {
				continue
			}
			d, ok := p.duration(f.get("sleep"), path+".sleep")
			if !ok {
				continue
			}
			step.Sleep = d
		default:
			c := p.parseCall(item, path)
			if c == nil {
				continue
			}
			step.Calls = []*Call{c}
		}
		p.s.Steps = append(p.s.Steps, step)
	}
}

var fetchMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

func (p *parser) parseCall(n *yaml.Node, path string) *Call {
	f := p.mapping(n, path, "stub", "method", "args", "fetch", "at", "outer", "expect")
	if f == nil {
		return nil
	}
	c := &Call{Path: path, Line: resolve(n).Line, Outer: 1}
	ok := true
	if sn := f.require(p, "stub", n); sn != nil {
		name, good := p.name(sn, path+".stub")
		if good {
			c.Stub = p.stubs[name]
			if c.Stub == nil {
				if !p.brokenStubs[name] {
					p.errorf(sn, path+".stub", nil, "unknown stub %q; defined are %s", name, p.stubNames())
				}
				good = false
			}
		}
		ok = ok && good
	} else {
		ok = false
	}
	mn, fn := f.get("method"), f.get("fetch")
	switch {
	case mn != nil && fn != nil:
		p.errorf(fn, path+".fetch", nil, "a call has a method or a fetch, not both")
		ok = false
	case mn == nil && fn == nil:
		p.errorf(n, path+".method", nil, "missing: a call needs a method (or a fetch)")
		ok = false
	case mn != nil:
		if an := f.get("args"); an != nil && !p.parseArgs(an, path+".args", c) {
			ok = false
		}
		name, good := p.name(mn, path+".method")
		if good && c.Stub != nil {
			good = p.checkMethod(mn, path, c, name)
		}
		c.Method = name
		ok = ok && good
	default:
		if an := f.get("args"); an != nil {
			p.errorf(an, path+".args", nil, "a fetch takes no args; give its body in fetch.body")
			ok = false
		}
		c.Method = "fetch"
		c.Fetch = p.parseFetch(fn, path+".fetch", c)
		if c.Fetch == nil {
			ok = false
		}
		if ok && c.Stub != nil && !c.Stub.Namespace.fetch {
			p.errorf(fn, path+".fetch", nil, "class %s has no fetch handler (it is not an http.Handler); classes with one: %s",
				c.Stub.Namespace.Class.Name, strings.Join(fetchClasses(), ", "))
			ok = false
		}
	}
	if an := f.get("at"); an != nil {
		d, good := p.duration(an, path+".at")
		c.At, c.HasAt = d, good
		ok = ok && good
	}
	if on := f.get("outer"); on != nil {
		v, good := p.integer(on, path+".outer", 1, MaxOuter)
		c.Outer = v
		ok = ok && good
	}
	if !ok {
		return nil
	}
	c.label = callLabel(c)
	if en := f.get("expect"); en != nil {
		c.Expect = p.parseCallExpect(en, path+".expect", c)
	}
	c.Index = len(p.s.calls)
	p.s.calls = append(p.s.calls, c)
	return c
}

func fetchClasses() []string {
	var out []string
	for _, c := range examples.Classes() {
		if probeClasses()[c.Name].fetch {
			out = append(out, c.Name)
		}
	}
	return out
}

func (p *parser) parseArgs(n *yaml.Node, path string, c *Call) bool {
	items, ok := p.seq(n, path, "arguments")
	if !ok {
		return false
	}
	for i, item := range items {
		v, good := p.value(item, fmt.Sprintf("%s[%d]", path, i))
		if !good {
			return false
		}
		c.Args = append(c.Args, v)
	}
	return true
}

// checkMethod checks that the stub's class has the method and that the
// arguments fit its parameters, converting them as a call would.
func (p *parser) checkMethod(n *yaml.Node, path string, c *Call, name string) bool {
	ns := c.Stub.Namespace
	m, found := ns.methods[name]
	if !found {
		p.errorf(n, path+".method", nil, "unknown method %q of class %s (namespace %s); it has %s",
			name, ns.Class.Name, ns.Name, strings.Join(slices.Sorted(maps.Keys(ns.methods)), ", "))
		return false
	}
	t := reflect.TypeOf(m.Fn())
	params := make([]string, 0, t.NumIn())
	for i := 1; i < t.NumIn(); i++ {
		params = append(params, t.In(i).String())
	}
	sig := fmt.Sprintf("%s(%s)", name, strings.Join(params, ", "))
	if len(c.Args) != len(params) {
		p.errorf(n, path+".args", nil, "%s takes %d argument(s), got %d", sig, len(params), len(c.Args))
		return false
	}
	for i, a := range c.Args {
		if err := checkArg(a, t.In(i+1)); err != nil {
			p.errorf(n, fmt.Sprintf("%s.args[%d]", path, i), nil, "%s: argument %d: %v", sig, i+1, err)
			return false
		}
	}
	return true
}

func (p *parser) parseFetch(n *yaml.Node, path string, c *Call) *Fetch {
	f := p.mapping(n, path, "method", "path", "body", "streaming")
	if f == nil {
		return nil
	}
	ft := &Fetch{Method: http.MethodGet}
	ok := true
	if mn := f.get("method"); mn != nil {
		v, good := p.name(mn, path+".method")
		if good && !slices.Contains(fetchMethods, v) {
			p.errorf(mn, path+".method", nil, "%q is not an HTTP method; allowed are %s", v, strings.Join(fetchMethods, ", "))
			good = false
		}
		ft.Method = v
		ok = ok && good
	}
	if pn := f.require(p, "path", n); pn != nil {
		v, good := p.name(pn, path+".path")
		if good {
			if u, err := url.ParseRequestURI(v); err != nil || !strings.HasPrefix(v, "/") || u.Host != "" {
				p.errorf(pn, path+".path", err, "%q is not a path: want one starting with /, such as /cat.jpg", v)
				good = false
			}
		}
		ft.Path = v
		ok = ok && good
	} else {
		ok = false
	}
	if bn := f.get("body"); bn != nil {
		v, good := p.str(bn, path+".body")
		ft.Body = v
		ok = ok && good
	}
	if sn := f.get("streaming"); sn != nil {
		v, good := p.boolean(sn, path+".streaming")
		ft.Streaming = v
		ok = ok && good
	}
	if !ok {
		return nil
	}
	return ft
}

// callLabel says what a call is: AddOne("apple"), PUT /cat.jpg (streaming body).
func callLabel(c *Call) string {
	if c.Fetch != nil {
		s := c.Fetch.Method + " " + c.Fetch.Path
		if c.Fetch.Streaming {
			s += " (streaming body)"
		}
		return s
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = render.Value(a)
	}
	return c.Method + "(" + strings.Join(args, ", ") + ")"
}
