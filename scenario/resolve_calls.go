package scenario

// The resolve pass over the calls: each call's stub, method and arguments
// (checked against the method's Go signature), fetch request, time and
// application loop, then its expectations.

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/render"
)

func (p *parser) resolveCalls(l list[*rawStep]) {
	if !p.list(l.n, l.ok, "calls", "calls {stub, method, args, ...}, concurrent blocks and sleeps") {
		return
	}
	if len(l.items) == 0 {
		p.errorf(l.n, "calls", nil, "is empty: list at least one call")
	}
	for i, r := range l.items {
		if step := p.resolveStep(r, fmt.Sprintf("calls[%d]", i)); step != nil {
			p.s.Steps = append(p.s.Steps, step)
		}
	}
}

// resolveStep resolves one entry of calls; nil when it is left out.
func (p *parser) resolveStep(r *rawStep, path string) *Step {
	step := &Step{Line: r.line}
	switch {
	case r.concurrent:
		if !p.shape(r.shape) {
			return nil
		}
		step.Concurrent = true
		if p.list(r.subs.n, r.subs.ok, path+".concurrent", "calls {stub, method, args, ...}") && r.subs.content != nil && len(r.subs.content) == 0 {
			p.errorf(r.subs.n, path+".concurrent", nil, "is empty: list the calls to make together")
		}
		for _, sub := range r.subs.items {
			if c := p.resolveCall(sub); c != nil {
				step.Calls = append(step.Calls, c)
			}
		}
	case r.isSleep:
		if !p.shape(r.shape) {
			return nil
		}
		d, ok := p.duration(r.sleep, path+".sleep")
		if !ok {
			return nil
		}
		step.Sleep = d
	case r.socket != nil:
		step.Socket = p.resolveSocket(r.socket, path)
		if step.Socket == nil {
			return nil
		}
	default:
		c := p.resolveCall(r.call)
		if c == nil {
			return nil
		}
		step.Calls = []*Call{c}
	}
	return step
}

var fetchMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// resolveCall resolves a call; nil when it has a problem (its expectations
// are then checked for errors only).
func (p *parser) resolveCall(r *rawCall) *Call {
	if !p.shape(r.shape) {
		return nil
	}
	path := r.path
	c := &Call{Path: path, Line: resolve(r.at).Line, Outer: 1}
	ok := p.callStub(r, c)
	switch {
	case r.method.given() && r.fetchNode != nil:
		p.errorf(r.fetchNode, path+".fetch", nil, "a call has a method or a fetch, not both")
		ok = false
	case !r.method.given() && r.fetchNode == nil:
		p.errorf(r.at, path+".method", nil, "missing: a call needs a method (or a fetch)")
		ok = false
	case r.method.given():
		if r.argsNode != nil && !p.resolveArgs(r.args, path+".args", c) {
			ok = false
		}
		name, good := p.name(r.method, path+".method")
		if good && c.Stub != nil {
			good = p.checkMethod(r.method, path, c, name)
		}
		c.Method = name
		ok = ok && good
	default:
		ok = p.callFetch(r, c) && ok
	}
	if r.start.given() {
		d, good := p.duration(r.start, path+".at")
		c.At, c.HasAt = d, good
		ok = ok && good
	}
	if r.outer.given() {
		v, good := p.integer(r.outer, path+".outer", 1, MaxOuter)
		c.Outer = v
		ok = ok && good
	}
	if !ok {
		p.checkExpectOf(r, c)
		return nil
	}
	c.label = callLabel(c)
	if r.expect != nil {
		c.Expect = p.resolveCallExpect(r.expect, path+".expect", c)
	}
	c.Index = len(p.s.calls)
	p.s.calls = append(p.s.calls, c)
	return c
}

// checkExpectOf reads the expectations of a call that has a problem, for
// their errors only, so that one run shows the problems of the whole call
// (its expect, too); the call itself is not run. Where the call's own
// fields were bad, it reads them as a call made once, and as a fetch if it
// has one.
func (p *parser) checkExpectOf(r *rawCall, c *Call) {
	if r.expect == nil {
		return
	}
	if c.Outer < 1 {
		c.Outer = 1
	}
	if r.fetchNode != nil && !r.method.given() && c.Fetch == nil {
		c.Fetch = &Fetch{}
	}
	p.resolveCallExpect(r.expect, r.path+".expect", c)
}

// callStub resolves the stub a call goes through.
func (p *parser) callStub(r *rawCall, c *Call) bool {
	if !p.require(r.shape, "stub", r.at) {
		return false
	}
	name, good := p.name(r.stub, r.path+".stub")
	if good {
		c.Stub = p.stubs[name]
		if c.Stub == nil {
			if !p.brokenStubs[name] {
				p.errorf(r.stub.n, r.path+".stub", nil, "unknown stub %s%s; defined are %s", quote.Q(name), p.stubSuggestion(name), p.stubNames())
			}
			good = false
		}
	}
	return good
}

// callFetch resolves the request of a fetch call.
func (p *parser) callFetch(r *rawCall, c *Call) bool {
	ok := true
	if r.argsNode != nil {
		p.errorf(r.argsNode, r.path+".args", nil, "a fetch takes no args; give its body in fetch.body")
		ok = false
	}
	c.Method = "fetch"
	c.Fetch = p.resolveFetch(r.fetch, r.path+".fetch")
	if c.Fetch == nil {
		ok = false
	}
	if ok && c.Stub != nil && !c.Stub.Namespace.fetch {
		p.errorf(r.fetchNode, r.path+".fetch", nil, "class %s has no fetch handler (it is not an http.Handler); classes with one: %s",
			c.Stub.Namespace.Class.Name, p.fetchClasses())
		ok = false
	}
	return ok
}

func (p *parser) resolveArgs(l list[anyVal], path string, c *Call) bool {
	if !p.list(l.n, l.ok, path, "arguments") {
		return false
	}
	for i, x := range l.items {
		v, good := p.value(x, fmt.Sprintf("%s[%d]", path, i))
		if !good {
			return false
		}
		c.Args = append(c.Args, v)
	}
	return true
}

// checkMethod checks that the stub's class has the method and that the
// arguments fit its parameters, converting them as a call would.
func (p *parser) checkMethod(x val[string], path string, c *Call, name string) bool {
	ns := c.Stub.Namespace
	m, found := ns.methods[name]
	if !found {
		methods := slices.Sorted(maps.Keys(ns.methods))
		p.errorf(x.n, path+".method", nil, "unknown method %s%s of class %s (namespace %s); it has %s",
			quote.Q(name), didYouMean(name, methods), ns.Class.Name, ns.Name, strings.Join(methods, ", "))
		return false
	}
	if i, err := checkArgs(name, m, c.Args); err != nil {
		at := path + ".args"
		if i >= 0 {
			at = fmt.Sprintf("%s[%d]", at, i)
		}
		p.errorf(x.n, at, nil, "%v", err)
		return false
	}
	return true
}

func (p *parser) resolveFetch(r *rawFetch, path string) *Fetch {
	if !p.shape(r.shape) {
		return nil
	}
	ft := &Fetch{Method: http.MethodGet}
	ok := true
	if r.method.given() {
		v, good := p.name(r.method, path+".method")
		if good && !slices.Contains(fetchMethods, v) {
			p.errorf(r.method.n, path+".method", nil, "%s is not an HTTP method; allowed are %s", quote.Q(v), strings.Join(fetchMethods, ", "))
			good = false
		}
		ft.Method = v
		ok = ok && good
	}
	if p.require(r.shape, "path", r.at) {
		v, good := p.name(r.path, path+".path")
		if good {
			if u, err := url.ParseRequestURI(v); err != nil || !strings.HasPrefix(v, "/") || u.Host != "" {
				p.errorf(r.path.n, path+".path", err, "%s is not a path: want one starting with /, such as /cat.jpg", quote.Q(v))
				good = false
			}
		}
		ft.Path = v
		ok = ok && good
	} else {
		ok = false
	}
	if r.body.given() {
		v, good := p.str(r.body, path+".body")
		ft.Body = v
		ok = ok && good
	}
	if r.streaming.given() {
		v, good := p.boolean(r.streaming, path+".streaming")
		ft.Streaming = v
		ok = ok && good
	}
	if r.websocket.given() {
		v, good := p.name(r.websocket, path+".websocket")
		if good && ft.Method != http.MethodGet {
			p.errorf(r.websocket.n, path+".websocket", nil, "a WebSocket opens with a GET, and this fetch is a %s (the platform's words: WebSocket must be initiated with a GET request.)", ft.Method)
			good = false
		}
		if good && ft.Streaming {
			p.errorf(r.websocket.n, path+".websocket", nil, "a WebSocket upgrade has no body: drop streaming")
			good = false
		}
		if good && !slices.Contains(p.sockets, v) {
			p.sockets = append(p.sockets, v)
		}
		ft.WebSocket = v
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
