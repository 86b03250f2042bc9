package scenario

// The resolve pass, the second of the loader's two: it walks a decoded
// file (decode_file.go) in one order, reports what decoding kept, checks
// ranges and resolves names (classes, namespaces, stubs, methods, faults),
// and builds the Scenario. Every problem is reported at its node's line as
// FILE:LINE: field: message.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/optrange"
	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"go.yaml.in/yaml/v3"
)

// resolveFile is the resolve pass over a decoded file: it reports what
// decoding kept, checks ranges and resolves names, in the order of the
// fields (namespaces, then the stubs that name them, then the calls
// through the stubs...), and fills p.s.
func (p *parser) resolveFile(f *rawFile, root *yaml.Node) {
	if !p.shape(f.shape) {
		p.s = nil
		return
	}
	if v, ok := p.str(f.name, "name"); ok && v != "" {
		p.s.Name = v
	}
	if f.desc.given() {
		p.s.Description, _ = p.str(f.desc, "description")
	}
	if v, ok := p.uint(f.seed, "seed"); ok {
		p.s.Seed = v
	}
	if v, ok := p.boolean(f.eviction, "eviction"); ok {
		p.s.NoEviction = !v
	}
	if p.require(f.shape, "namespaces", root) {
		p.resolveNamespaces(f)
	}
	if p.require(f.shape, "stubs", root) {
		p.resolveStubs(f)
	}
	if f.faults != nil {
		p.resolveFaults(f.faults)
	}
	if p.require(f.shape, "calls", root) {
		p.resolveCalls(f.calls)
	}
	if f.expect != nil {
		p.resolveEnd(f.expect, "expect", &p.s.Expect)
	}
	if f.explore != nil {
		p.resolveExplore(f.explore)
	}
}

func (p *parser) resolveNamespaces(f *rawFile) {
	e := f.namespaces
	if !p.entries(e, "namespaces", "NAME: class ("+p.cfg.oneOf()+")") {
		return
	}
	if len(e.keys) == 0 {
		p.errorf(e.at, "namespaces", nil, "is empty: define at least one, as NAME: class (%s)", p.cfg.oneOf())
	}
	for i, k := range e.keys {
		path := join("namespaces", k.Value)
		p.brokenNS[k.Value] = true // until it is defined
		backend, ok := p.namespaceStorage(f, i, path)
		if !ok {
			continue
		}
		if f.nsShapes[i] != nil {
			path = join(path, "class")
			if !p.require(f.nsShapes[i], "class", f.nsShapes[i].at) {
				continue
			}
		}
		cname, ok := p.name(f.classes[i], path)
		if !ok {
			continue
		}
		reg := p.cfg.lookup(cname)
		if reg == nil {
			p.errorf(e.vals[i], path, nil, "unknown class %s%s; %s", quote.Q(cname), didYouMean(cname, p.cfg.classNames()), p.cfg.registered())
			continue
		}
		info := p.class(cname)
		if info.err != nil {
			p.errorf(e.vals[i], path, info.err, "class %s cannot be used: %v", quote.Q(cname), info.err)
			continue
		}
		delete(p.brokenNS, k.Value)
		ns := &Namespace{Name: k.Value, Class: NamedClass{Name: cname, New: reg.classes[cname]}, Storage: backend, Line: k.Line, methods: info.methods, fetch: info.fetch}
		p.namespaces[ns.Name] = ns
		p.s.Namespaces = append(p.s.Namespaces, ns)
	}
	for i, k := range e.keys {
		if ns := p.namespaces[k.Value]; ns != nil && i < len(f.bindings) && f.bindings[i] != nil {
			ns.Bindings = p.resolveBindings(f.bindings[i], join(join("namespaces", k.Value), "bindings"))
		}
	}
}

// resolveBindings reads a namespace's bindings: BINDING: NAMESPACE, each
// naming a namespace of the file (runtime.WithBinding).
func (p *parser) resolveBindings(b *entries, path string) map[string]string {
	if !p.entries(b, path, "BINDING: namespace (a namespace of the file)") {
		return nil
	}
	out := map[string]string{}
	for i, k := range b.keys {
		target, ok := p.str(decodeStr(b.vals[i]), join(path, k.Value))
		if !ok {
			continue
		}
		if p.namespaces[target] == nil && !p.brokenNS[target] {
			p.errorf(b.vals[i], join(path, k.Value), nil, "is %s: no namespace of the file has that name; the namespaces are %s", quote.Q(target), p.namespaceNames())
			continue
		}
		out[k.Value] = target
	}
	return out
}

// namespaceStorage reads the i-th namespace's storage: sqlite (the
// default, as for new classes on the platform) or key-value. It reports
// false when the namespace's mapping form or its storage is bad.
func (p *parser) namespaceStorage(f *rawFile, i int, path string) (object.Backend, bool) {
	if f.nsShapes[i] == nil {
		return object.SQLiteBacked, true
	}
	if !p.shape(f.nsShapes[i]) {
		return 0, false
	}
	x := f.storages[i]
	if !x.given() {
		return object.SQLiteBacked, true
	}
	v, ok := p.str(x, join(path, "storage"))
	if !ok {
		return 0, false
	}
	for _, b := range []object.Backend{object.SQLiteBacked, object.KeyValueBacked} {
		if v == b.String() {
			return b, true
		}
	}
	p.errorf(x.n, join(path, "storage"), nil, "is %s: want sqlite (the default: a class declared with new_sqlite_classes) or key-value (new_classes)", quote.Q(v))
	return 0, false
}

// namespaceNames lists the namespaces declared, for a message.
func (p *parser) namespaceNames() string {
	return nameList(p.s.Namespaces, func(ns *Namespace) string { return ns.Name })
}

// stubSuggestion is didYouMean for an unknown stub name.
func (p *parser) stubSuggestion(name string) string {
	return didYouMean(name, names(p.s.Stubs, func(s *Stub) string { return s.Name }))
}

// stubNames lists the stubs declared, for a message.
func (p *parser) stubNames() string {
	return nameList(p.s.Stubs, func(s *Stub) string { return s.Name })
}

// nameList joins the names of xs with commas, "(none)" when there are none.
func nameList[T any](xs []T, name func(T) string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = name(x)
	}
	return strings.Join(names, ", ")
}

// lookupNamespace resolves a namespace reference.
func (p *parser) lookupNamespace(x val[string], path string) (*Namespace, bool) {
	name, ok := p.name(x, path)
	if !ok {
		return nil, false
	}
	ns := p.namespaces[name]
	if ns == nil {
		if !p.brokenNS[name] {
			p.errorf(x.n, path, nil, "unknown namespace %s%s; defined are %s", quote.Q(name),
				didYouMean(name, names(p.s.Namespaces, func(ns *Namespace) string { return ns.Name })), p.namespaceNames())
		}
		return nil, false
	}
	return ns, true
}

func (p *parser) resolveStubs(f *rawFile) {
	e := f.stubs
	if !p.entries(e, "stubs", "NAME: {namespace, object, options, reuse}") {
		return
	}
	if len(e.keys) == 0 {
		p.errorf(e.at, "stubs", nil, "is empty: define at least one, as NAME: {namespace: NS, object: NAME}")
	}
	for i, k := range e.keys {
		path := join("stubs", k.Value)
		p.brokenStubs[k.Value] = true // until it is defined
		if st := p.resolveStub(f.stubDefs[i], k, path); st != nil {
			delete(p.brokenStubs, st.Name)
			p.stubs[st.Name] = st
			p.objects[st.Object] = true
			p.s.Stubs = append(p.s.Stubs, st)
		}
	}
}

// resolveStub resolves the stub defined at key k; nil when it cannot be
// defined.
func (p *parser) resolveStub(r *rawStub, k *yaml.Node, path string) *Stub {
	if !p.shape(r.shape) {
		return nil
	}
	st := &Stub{Name: k.Value, Object: k.Value, Line: k.Line, MaxRetries: stub.DefaultMaxRetries, TimeoutMs: stub.DefaultTimeoutMs}
	switch {
	case r.namespace.given():
		ns, ok := p.lookupNamespace(r.namespace, path+".namespace")
		if !ok {
			return nil
		}
		st.Namespace = ns
	case len(p.s.Namespaces) == 1:
		st.Namespace = p.s.Namespaces[0]
	default:
		// With no namespace defined, the namespaces' problem is reported.
		if len(p.s.Namespaces) > 1 {
			p.errorf(k, path+".namespace", nil, "missing: with more than one namespace, say which; defined are %s", p.namespaceNames())
		}
		return nil
	}
	if v, ok := p.name(r.object, path+".object"); ok {
		st.Object = v
	}
	if r.reuse.given() {
		st.Reuse, _ = p.boolean(r.reuse, path+".reuse")
	}
	if r.options != nil {
		// A stub with a bad option is still defined, so that the calls
		// through it are checked too; the problem is reported.
		p.resolveOptions(r.options, path+".options", st)
	}
	return st
}

// resolveOptions reads a stub's options, in the platform's form (retry:
// {maxRetries, timeoutMs}) or dosim's flat one, never both.
func (p *parser) resolveOptions(o *rawOptions, path string, st *Stub) {
	if !p.shape(o.shape) {
		return
	}
	if o.retry == nil {
		p.resolveOptionValues(o, path, st)
		return
	}
	for i, k := range retryKeys {
		if o.vals[i].n != nil {
			p.errorf(o.shape.get("retry"), path+".retry", nil,
				"given together with %s: use one form, retry: {maxRetries, timeoutMs} or the flat maxRetries, timeoutMs, not both", k)
			return
		}
	}
	if p.shape(o.retry.shape) {
		p.resolveOptionValues(o.retry, path+".retry", st)
	}
}

// resolveOptionValues reads the fields maxRetries and timeoutMs through
// stub.ParseOptions, one key at a time so that each problem has its line.
func (p *parser) resolveOptionValues(o *rawOptions, path string, st *Stub) {
	for i, k := range retryKeys {
		x := o.vals[i]
		if x.n == nil {
			continue
		}
		if rn := resolve(x.n); rn.Kind != yaml.ScalarNode {
			p.errorf(x.n, path+"."+k, stub.ErrType, "%s is of the wrong type: %s", kindName(rn), stub.TypeMessage(k))
			continue
		}
		v, ok := p.value(x, path+"."+k)
		if !ok {
			continue
		}
		opts, err := stub.ParseOptions(map[string]any{k: v})
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "stub option "+k+": ")
			p.errorf(x.n, path+"."+k, err, "%s", msg)
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

// didYouMean is " (did you mean "X"?)" for the candidate close to an
// unknown name (quote.Suggest), else "".
func didYouMean(name string, candidates []string) string {
	if s := quote.Suggest(name, candidates); s != "" {
		return " (" + s + ")"
	}
	return ""
}

// names is the name of each of xs.
func names[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}

// rates resolves a FAULT: rate mapping at path.
func (p *parser) rates(r *rawRates, at string) transport.Rates {
	rates := transport.Rates{}
	if !p.entries(r.entries, at, "FAULT: rate (a number from 0 to 1)") {
		return rates
	}
	sum := 0.0
	for i, k := range r.entries.keys {
		path := join(at, k.Value)
		fault, err := transport.ParseFault(k.Value)
		if err != nil || fault == transport.None {
			p.errorf(k, path, err, "unknown fault %s%s; allowed are %s", quote.Q(k.Value), didYouMean(k.Value, faultList(false)), faultNames(false))
			continue
		}
		x := r.rates[i]
		vn := resolve(x.n)
		if !x.ok {
			p.errorf(vn, path, nil, "is %s: want a rate, a number from 0 to 1", kindName(vn))
			continue
		}
		if !(x.v >= 0 && x.v <= 1) {
			p.errorf(vn, path, nil, "%s is out of range: want a number from 0 to 1", vn.Value)
			continue
		}
		rates[fault] = x.v
		sum += x.v
	}
	if sum > 1+1e-9 {
		p.errorf(r.entries.at, at, nil, "the rates add up to %g: they may add up to at most 1", sum)
		return nil
	}
	return rates
}

// resolveExplore resolves what dosim explore uses: its random fault rates
// and the expectations that must hold under any faults.
func (p *parser) resolveExplore(e *rawExplore) {
	if !p.shape(e.shape) {
		return
	}
	p.s.Explore.Lines = map[string]int{}
	for k, n := range e.shape.vals {
		p.s.Explore.Lines[k] = n.Line
	}
	p.resolveHorizon(e.horizon)
	if e.recurring.given() {
		p.s.Explore.RecurringAlarms, _ = p.boolean(e.recurring, "explore.recurring-alarms")
	}
	if e.random != nil {
		p.s.Explore.Rates = p.rates(e.random, "explore.random")
	}
	if e.latency != nil {
		if l, ok := p.latency(e.latency, "explore.latency"); ok {
			p.s.Explore.Latency = &l
		}
	}
	p.resolveStrategy(e)
	p.resolveInterleaving(e)
	if e.expect != nil {
		p.resolveEnd(e.expect, "explore.expect", &p.s.Explore.Expect)
	}
}

// resolveHorizon resolves explore.horizon: a virtual duration in
// explore's range (internal/optrange, as --horizon), or off (-1: no
// liveness check, no bound).
func (p *parser) resolveHorizon(x val[string]) {
	if x.n == nil {
		return
	}
	rn := resolve(x.n)
	r := optrange.Horizon
	if !x.ok {
		p.errorf(rn, "explore.horizon", nil, "is %s: want %s", kindName(rn), r.Want)
		return
	}
	if x.v == "off" {
		p.s.Explore.Horizon = -1
		return
	}
	d, err := time.ParseDuration(x.v)
	switch {
	case err != nil:
		p.errorf(rn, "explore.horizon", nil, "%s is not a duration: want %s", quote.Q(x.v), r.Want)
	case !r.Holds(d):
		p.errorf(rn, "explore.horizon", nil, "%s is out of range: want %s", x.v, r.Want)
	default:
		p.s.Explore.Horizon = d
	}
}

// resolveInterleaving resolves explore.interleaving: the turns meant to
// interleave at their awaits, each a method of a namespace's class
// ("Flush"), qualified by the namespace or not ("OUTBOX.Flush"), "fetch"
// for a class that serves fetch, or "alarm", "schedule" or "queue".
func (p *parser) resolveInterleaving(e *rawExplore) {
	l := e.interleaving
	if !p.list(l.n, l.ok, "explore.interleaving", "turn names") {
		return
	}
	for i, x := range l.items {
		path := fmt.Sprintf("explore.interleaving[%d]", i)
		name, ok := p.name(x, path)
		if !ok {
			continue
		}
		if !p.turnName(name) {
			p.errorf(x.n, path, nil, "is %q: want a method of a namespace's class (Method or NAMESPACE.Method), fetch, alarm, schedule or queue", name)
			continue
		}
		p.s.Explore.Interleaving = append(p.s.Explore.Interleaving, name)
	}
}

func (p *parser) turnName(name string) bool { return p.s.NamesTurns(name) }

// NamesTurns reports whether name names turns of the scenario's objects
// (explore.interleaving): a method of one of its namespaces' classes,
// qualified by the namespace or not, fetch (of a class that serves it),
// alarm, schedule or queue.
func (s *Scenario) NamesTurns(name string) bool {
	switch name {
	case "alarm", "schedule", "queue":
		return true
	}
	for _, ns := range s.Namespaces {
		method, qualified := strings.CutPrefix(name, ns.Name+".")
		if !qualified {
			method = name
		}
		if _, ok := ns.methods[method]; ok || (method == "fetch" && ns.fetch) {
			return true
		}
	}
	return false
}
