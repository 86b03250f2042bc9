package scenario

// The fault rules of the resolve pass (resolve.go): each rule's match,
// fault and reason, checked against the namespaces and methods declared.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

func (p *parser) resolveFaults(f *rawFaults) {
	if !p.shape(f.shape) {
		return
	}
	if p.list(f.rules.n, f.rules.ok, "faults.rules", "rules {namespace, object, method, attempt, fault, delay}") {
		for i, r := range f.rules.items {
			if rule, ok := p.resolveRule(r, fmt.Sprintf("faults.rules[%d]", i)); ok {
				p.s.Faults.Rules = append(p.s.Faults.Rules, rule)
			}
		}
	}
	if f.random != nil {
		if rates := p.rates(f.random, "faults.random"); len(rates) > 0 {
			p.s.Faults.Rates = rates
		}
	}
	if f.latency != nil {
		p.s.Faults.Latency, _ = p.latency(f.latency, "faults.latency")
	}
}

// resolveRule resolves a fault rule: what it matches, then what it does.
func (p *parser) resolveRule(r *rawRule, path string) (transport.Rule, bool) {
	var rule transport.Rule
	if !p.shape(r.shape) {
		return rule, false
	}
	ok := p.ruleMatch(r, path, &rule)
	if r.call.given() {
		v, good := p.integer(r.call, path+".call", 1, 1_000_000)
		ok = ok && good
		rule.Call = v
	}
	if r.attempt.given() {
		v, good := p.integer(r.attempt, path+".attempt", 1, stub.MaxMaxRetries+1)
		ok = ok && good
		rule.Attempt = v
	}
	if v, good := p.name(r.fault, path+".fault"); good {
		fault, err := transport.ParseFault(v)
		switch {
		case err != nil:
			p.errorf(r.fault.n, path+".fault", err, "unknown fault %s%s; allowed are %s", quote.Q(v), didYouMean(v, faultList(true)), faultNames(true))
			good = false
		case fault.OnConnection():
			p.errorf(r.fault.n, path+".fault", transport.ErrInvalid, "%s strikes a WebSocket connection, not an attempt: give it a rate per message under faults.random; a rule names one of %s", v, faultNames(true))
			good = false
		}
		rule.Fault = fault
		ok = ok && good
	} else if r.fault.given() {
		ok = false
	}
	if r.delay.given() {
		v, good := p.duration(r.delay, path+".delay")
		ok = ok && good
		rule.Delay = v
	}
	if r.why.given() {
		ok = p.ruleReason(r.why, path+".reason", &rule) && ok
	}
	if ok && !r.fault.given() && !r.delay.given() {
		p.errorf(r.shape.at, path, nil, "a rule needs a fault, a delay or both")
		ok = false
	}
	return rule, ok
}

// ruleMatch resolves what a rule matches: its namespace, object and
// method, each a name the file defines.
func (p *parser) ruleMatch(r *rawRule, path string, rule *transport.Rule) bool {
	ok := true
	var ns *Namespace
	if r.namespace.given() {
		if ns, ok = p.lookupNamespace(r.namespace, path+".namespace"); ok {
			rule.Namespace = ns.Name
		}
	}
	if r.object.given() {
		v, good := p.name(r.object, path+".object")
		switch {
		case !good:
			ok = false
		case !p.objects[v]:
			p.errorf(r.object.n, path+".object", nil, "%s is not the object of any stub; the stubs' objects are %s", quote.Q(v), strings.Join(slices.Sorted(maps.Keys(p.objects)), ", "))
			ok = false
		default:
			rule.Object = v
		}
	}
	if r.method.given() {
		v, good := p.name(r.method, path+".method")
		names := p.methodNames(ns)
		switch {
		case !good:
			ok = false
		case !slices.Contains(names, v):
			where := "the namespaces' classes have"
			if ns != nil {
				where = fmt.Sprintf("namespace %s (class %s) has", ns.Name, ns.Class.Name)
			}
			p.errorf(r.method.n, path+".method", nil, "unknown method %s%s; %s %s", quote.Q(v), didYouMean(v, names), where, strings.Join(names, ", "))
			ok = false
		default:
			rule.Method = v
		}
	}
	return ok
}

// ruleReason resolves a reset rule's reason.
func (p *parser) ruleReason(x val[string], path string, rule *transport.Rule) bool {
	v, good := p.name(x, path)
	if !good {
		return false
	}
	reason, err := transport.ParseResetReason(v)
	switch {
	case err != nil:
		p.errorf(x.n, path, err, "unknown reset reason %s; allowed are code-update, storage, memory-limit", quote.Q(v))
		good = false
	case rule.Fault != transport.Reset:
		p.errorf(x.n, path, nil, "a reason goes only with fault: %s (the fault is %s)", transport.Reset, rule.Fault)
		good = false
	}
	rule.Reason = reason
	return good
}

// faultNames lists the fault names: for a rule, "none" and the attempt
// faults; for a rate, every fault.
func faultNames(rule bool) string { return strings.Join(faultList(rule), ", ") }

// faultList is faultNames as a list.
func faultList(rule bool) []string {
	var names []string
	faults := transport.Faults()
	if rule {
		names = append(names, transport.None.String())
		faults = transport.AttemptFaults()
	}
	for _, f := range faults {
		names = append(names, f.String())
	}
	return names
}
