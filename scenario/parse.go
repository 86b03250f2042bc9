package scenario

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/quote"
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
// (rule D2), as transport.Outcomes defines them.
var Outcomes = func() []string {
	var names []string
	for _, o := range transport.Outcomes() {
		names = append(names, o.String())
	}
	return names
}()

// Load reads and parses the scenario file at path. The classes its
// namespaces may name are those the options register (WithClasses).
func Load(path string, opts ...Option) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: reading %s: %w", path, err)
	}
	return Parse(path, data, opts...)
}

// Parse parses a scenario. name is the file name used in messages and as
// the default scenario name; the classes its namespaces may name are those
// the options register (WithClasses). Every problem found is an *Error;
// the returned error is then an Errors.
func Parse(name string, data []byte, opts ...Option) (*Scenario, error) {
	p := &parser{file: name}
	for _, o := range opts {
		if o != nil {
			o.applyLoad(&p.cfg)
		}
	}
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
	cfg  loadConfig // the registered classes
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
	f := p.mapping(root, "", "name", "description", "seed", "eviction", "namespaces", "stubs", "faults", "calls", "expect", "explore")
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
	if n := f.get("eviction"); n != nil {
		if v, ok := p.boolean(n, "eviction"); ok {
			p.s.NoEviction = !v
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

func (p *parser) parseNamespaces(n *yaml.Node) {
	if n == nil {
		return
	}
	keys, vals := p.entries(n, "namespaces", "NAME: class ("+p.cfg.oneOf()+")")
	if keys == nil && resolve(n).Kind == yaml.MappingNode {
		p.errorf(n, "namespaces", nil, "is empty: define at least one, as NAME: class (%s)", p.cfg.oneOf())
	}
	for i, k := range keys {
		path := join("namespaces", k.Value)
		p.brokenNS[k.Value] = true // until it is defined
		cname, ok := p.name(vals[i], path)
		if !ok {
			continue
		}
		reg := p.cfg.lookup(cname)
		if reg == nil {
			p.errorf(vals[i], path, nil, "unknown class %s; %s", quote.Q(cname), p.cfg.registered())
			continue
		}
		info := p.class(cname)
		if info.err != nil {
			p.errorf(vals[i], path, info.err, "class %s cannot be used: %v", quote.Q(cname), info.err)
			continue
		}
		delete(p.brokenNS, k.Value)
		ns := &Namespace{Name: k.Value, Class: NamedClass{Name: cname, New: reg.classes[cname]}, Line: k.Line, methods: info.methods, fetch: info.fetch}
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
			p.errorf(n, path, nil, "unknown namespace %s; defined are %s", quote.Q(name), p.namespaceNames())
		}
		return nil, false
	}
	return ns, true
}

func (p *parser) parseStubs(n *yaml.Node) {
	if n == nil {
		return
	}
	keys, vals := p.entries(n, "stubs", "NAME: {namespace, object, options, reuse}")
	if keys == nil && resolve(n).Kind == yaml.MappingNode {
		p.errorf(n, "stubs", nil, "is empty: define at least one, as NAME: {namespace: NS, object: NAME}")
	}
	for i, k := range keys {
		path := join("stubs", k.Value)
		p.brokenStubs[k.Value] = true // until it is defined
		f := p.mapping(vals[i], path, "namespace", "object", "options", "reuse")
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
		if rn := f.get("reuse"); rn != nil {
			st.Reuse, _ = p.boolean(rn, path+".reuse")
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
		f, _ := clone.Number(v) // the number stub.ParseOptions accepted
		n := int(f)
		if k == "maxRetries" {
			st.MaxRetries = n
		} else {
			st.TimeoutMs = n
		}
	}
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
	f := p.mapping(n, path, "namespace", "object", "method", "call", "attempt", "fault", "delay", "reason")
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
			p.errorf(on, path+".object", nil, "%s is not the object of any stub; the stubs' objects are %s", quote.Q(v), strings.Join(slices.Sorted(maps.Keys(p.objects)), ", "))
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
			p.errorf(mn, path+".method", nil, "unknown method %s; %s %s", quote.Q(v), where, strings.Join(names, ", "))
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
				p.errorf(fn, path+".fault", err, "unknown fault %s; allowed are %s", quote.Q(v), faultNames(true))
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
	if rn := f.get("reason"); rn != nil {
		v, good := p.name(rn, path+".reason")
		if good {
			reason, err := transport.ParseResetReason(v)
			switch {
			case err != nil:
				p.errorf(rn, path+".reason", err, "unknown reset reason %s; allowed are code-update, storage, memory-limit", quote.Q(v))
				good = false
			case r.Fault != transport.Reset:
				p.errorf(rn, path+".reason", nil, "a reason goes only with fault: %s (the fault is %s)", transport.Reset, r.Fault)
				good = false
			}
			r.Reason = reason
		}
		ok = ok && good
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
			p.errorf(k, path, err, "unknown fault %s; allowed are %s", quote.Q(k.Value), faultNames(false))
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
	f := p.mapping(n, "explore", "random", "expect", "horizon", "recurring-alarms")
	if f == nil {
		return
	}
	if hn := f.get("horizon"); hn != nil {
		if d, ok := p.duration(hn, "explore.horizon"); ok {
			if d <= 0 {
				p.errorf(hn, "explore.horizon", nil, "is %v: want a positive virtual duration, such as 24h", d)
			} else {
				p.s.Explore.Horizon = d
			}
		}
	}
	if bn := f.get("recurring-alarms"); bn != nil {
		p.s.Explore.RecurringAlarms, _ = p.boolean(bn, "explore.recurring-alarms")
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
					p.errorf(sn, path+".stub", nil, "unknown stub %s; defined are %s", quote.Q(name), p.stubNames())
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
				c.Stub.Namespace.Class.Name, p.fetchClasses())
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
		p.errorf(n, path+".method", nil, "unknown method %s of class %s (namespace %s); it has %s",
			quote.Q(name), ns.Class.Name, ns.Name, strings.Join(slices.Sorted(maps.Keys(ns.methods)), ", "))
		return false
	}
	if i, err := checkArgs(name, m, c.Args); err != nil {
		at := path + ".args"
		if i >= 0 {
			at = fmt.Sprintf("%s[%d]", at, i)
		}
		p.errorf(n, at, nil, "%v", err)
		return false
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
			p.errorf(mn, path+".method", nil, "%s is not an HTTP method; allowed are %s", quote.Q(v), strings.Join(fetchMethods, ", "))
			good = false
		}
		ft.Method = v
		ok = ok && good
	}
	if pn := f.require(p, "path", n); pn != nil {
		v, good := p.name(pn, path+".path")
		if good {
			if u, err := url.ParseRequestURI(v); err != nil || !strings.HasPrefix(v, "/") || u.Host != "" {
				p.errorf(pn, path+".path", err, "%s is not a path: want one starting with /, such as /cat.jpg", quote.Q(v))
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
