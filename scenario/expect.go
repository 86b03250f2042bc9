package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"go.yaml.in/yaml/v3"
)

// The kinds of expectation.
const (
	ExpectOutcome    = "outcome"
	ExpectAttempts   = "attempts"
	ExpectExecutions = "executions"
	ExpectRejected   = "rejected"
	ExpectCalls      = "calls"
	ExpectEffects    = "effects"
	ExpectResult     = "result"
	ExpectStatus     = "status"
	ExpectBody       = "body"
	ExpectError      = "error"
	ExpectDuration   = "duration"
	ExpectStorage    = "storage"
	ExpectEffectKind = "effects-of-kind"
	ExpectResets     = "resets"
	ExpectSQL        = "sql"
)

// canonical turns a value into the plain form JSON gives it, so that an int
// stored by Go and a number written in YAML compare equal.
func canonical(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return string(b)
	}
	return out
}

// resolveCallExpect resolves a call's expectations, in the order of the
// kinds below, whatever the order in the file.
func (p *parser) resolveCallExpect(r *rawCallExpect, path string, c *Call) []Expectation {
	if !p.shape(r.shape) {
		return nil
	}
	var out []Expectation
	add := func(vn *yaml.Node, kind string, want any) {
		out = append(out, Expectation{Line: resolve(vn).Line, Path: path + "." + kind, Kind: kind, Want: want, canon: canonical(want)})
	}
	maxAttempts := (stub.MaxMaxRetries + 1) * c.Outer
	if v, ok := p.name(r.outcome, path+"."+ExpectOutcome); ok {
		if slices.Contains(Outcomes, v) {
			add(r.outcome.n, ExpectOutcome, v)
		} else {
			p.errorf(r.outcome.n, path+"."+ExpectOutcome, nil, "unknown outcome %s%s; allowed are %s", quote.Q(v), didYouMean(v, Outcomes), strings.Join(Outcomes, ", "))
		}
	}
	for _, k := range []struct {
		kind   string
		c      rawCount
		lo, hi int
	}{
		{ExpectCalls, r.calls, 1, c.Outer}, {ExpectAttempts, r.attempts, 0, maxAttempts}, {ExpectExecutions, r.executions, 0, maxAttempts},
		{ExpectRejected, r.rejs, 0, maxAttempts}, {ExpectEffects, r.effects, 0, maxCount},
	} {
		if v, ok := p.count(k.c, path+"."+k.kind, k.lo, k.hi); ok {
			add(k.c.n, k.kind, v)
		}
	}
	if v, ok := p.duration(r.duration, path+"."+ExpectDuration); ok {
		add(r.duration.n, ExpectDuration, v)
	}
	p.callResultExpect(r, path, c, add)
	if r.err != nil {
		if e, ok := p.resolveErrorExpect(r.err, path+"."+ExpectError); ok {
			add(r.err.n, ExpectError, e)
		}
	}
	return out
}

// callResultExpect resolves what a call is expected to answer: a method's
// result, a fetch's status and body.
func (p *parser) callResultExpect(r *rawCallExpect, path string, c *Call, add func(*yaml.Node, string, any)) {
	if rn := r.result.n; rn != nil {
		if c.Fetch != nil {
			p.errorf(rn, path+"."+ExpectResult, nil, "a fetch has no result; expect its status and body")
		} else if v, ok := p.value(r.result, path+"."+ExpectResult); ok {
			add(rn, ExpectResult, v)
		}
	}
	if r.status.given() {
		if c.Fetch == nil {
			p.errorf(r.status.n, path+"."+ExpectStatus, nil, "only a fetch has a status; expect a method's result")
		} else if v, ok := p.integer(r.status, path+"."+ExpectStatus, 100, 599); ok {
			add(r.status.n, ExpectStatus, v)
		}
	}
	if r.body.given() {
		if c.Fetch == nil {
			p.errorf(r.body.n, path+"."+ExpectBody, nil, "only a fetch has a body; expect a method's result")
		} else if v, ok := p.str(r.body, path+"."+ExpectBody); ok {
			add(r.body.n, ExpectBody, v)
		}
	}
}

func (p *parser) resolveErrorExpect(r *rawErrorExpect, path string) (ErrorExpectation, bool) {
	var e ErrorExpectation
	if r.none {
		e.None = true
		return e, true
	}
	if r.shape == nil {
		p.errorf(r.n, path, nil, "is %s: want none (the call succeeds) or a mapping of retryable, overloaded, remote, contains", kindName(r.n))
		return e, false
	}
	if !p.shape(r.shape) {
		return e, false
	}
	ok := true
	for _, flag := range []struct {
		name string
		x    val[bool]
		dst  **bool
	}{{"retryable", r.retryable, &e.Retryable}, {"overloaded", r.overloaded, &e.Overloaded}, {"remote", r.rem, &e.Remote}} {
		if flag.x.given() {
			v, good := p.boolean(flag.x, path+"."+flag.name)
			if good {
				*flag.dst = &v
			}
			ok = ok && good
		}
	}
	if r.contains.given() {
		v, good := p.name(r.contains, path+".contains")
		e.Contains = v
		ok = ok && good
	}
	return e, ok
}

// resolveEnd resolves expectations on the end state at path into out.
func (p *parser) resolveEnd(r *rawEnd, at string, out *[]Expectation) {
	if !p.shape(r.shape) {
		return
	}
	if p.list(r.sql.n, r.sql.ok, at+".sql", "{stub, query, rows} (args optional)") {
		for i, q := range r.sql.items {
			if e, ok := p.resolveSQLExpect(q, fmt.Sprintf("%s[%d]", at+".sql", i)); ok {
				*out = append(*out, e)
			}
		}
	}
	if p.list(r.storage.n, r.storage.ok, at+".storage", "{stub, key, value} or {stub, key, absent: true}") {
		for i, item := range r.storage.items {
			if e, ok := p.resolveStorageExpect(item, fmt.Sprintf("%s.storage[%d]", at, i)); ok {
				*out = append(*out, e)
			}
		}
	}
	if p.entries(r.resets, at+".resets", "STUB: count (N, {min: N}, {max: N})") {
		for i, k := range r.resets.keys {
			path := join(at+".resets", k.Value)
			st := p.stubs[k.Value]
			if st == nil {
				if !p.brokenStubs[k.Value] {
					p.errorf(k, path, nil, "unknown stub %s%s; defined are %s", quote.Q(k.Value), p.stubSuggestion(k.Value), p.stubNames())
				}
				continue
			}
			if v, ok := p.count(r.rcounts[i], path, 0, maxCount); ok {
				*out = append(*out, Expectation{Line: k.Line, Path: path, Kind: ExpectResets, Stub: st, Want: v})
			}
		}
	}
	if p.entries(r.effects, at+".effects", "KIND: count (N, {min: N}, {max: N})") {
		for i, k := range r.effects.keys {
			path := join(at+".effects", k.Value)
			if v, ok := p.count(r.ecounts[i], path, 0, maxCount); ok {
				*out = append(*out, Expectation{Line: k.Line, Path: path, Kind: ExpectEffectKind, Key: k.Value, Want: v})
			}
		}
	}
}

// resolveStorageExpect resolves one storage expectation at path: {stub,
// key, value} or {stub, key, absent: true}.
func (p *parser) resolveStorageExpect(r *rawStorage, path string) (Expectation, bool) {
	e, ok, shaped := p.keyedExpect(ExpectStorage, r.shape, r.stub, r.at, "key", r.key, path)
	if !shaped {
		return e, false
	}
	switch {
	case r.valueGiven && r.absent.given():
		p.errorf(r.absent.n, path+".absent", nil, "give a value or absent: true, not both")
		ok = false
	case r.valueGiven:
		v, good := p.value(r.value, path+".value")
		e.Want, e.canon = v, canonical(v)
		ok = ok && good
	case r.absent.given():
		v, good := p.boolean(r.absent, path+".absent")
		if good && !v {
			p.errorf(r.absent.n, path+".absent", nil, "absent: false says nothing; give the value expected instead")
			good = false
		}
		e.Absent = true
		ok = ok && good
	default:
		p.errorf(r.at, path+".value", nil, "missing: give the value expected, or absent: true")
		ok = false
	}
	return e, ok
}

// endStub resolves the stub field of an end-state expectation.
func (p *parser) endStub(f *fields, x val[string], item *yaml.Node, path string) (*Stub, bool) {
	if !p.require(f, "stub", item) {
		return nil, false
	}
	name, ok := p.name(x, path+".stub")
	if !ok {
		return nil, false
	}
	st := p.stubs[name]
	if st == nil && !p.brokenStubs[name] {
		p.errorf(x.n, path+".stub", nil, "unknown stub %s%s; defined are %s", quote.Q(name), p.stubSuggestion(name), p.stubNames())
	}
	return st, st != nil
}

// keyedExpect resolves what a storage and an SQL expectation share: its
// mapping (shaped is false when it is not one), its stub and its required
// name field k (the key, the query), which it sets as e.Key.
func (p *parser) keyedExpect(kind string, f *fields, stub val[string], at *yaml.Node, k string, x val[string], path string) (e Expectation, ok, shaped bool) {
	e = Expectation{Line: resolve(at).Line, Path: path, Kind: kind}
	if !p.shape(f) {
		return e, false, false
	}
	e.Stub, ok = p.endStub(f, stub, at, path)
	if !p.require(f, k, at) {
		return e, false, true
	}
	key, good := p.name(x, path+"."+k)
	e.Key = key
	return e, ok && good, true
}

// resolveSQLExpect resolves an expectation on an object's SQL database: a
// query and the rows it must return, {stub, query, args, rows}.
func (p *parser) resolveSQLExpect(r *rawSQL, path string) (Expectation, bool) {
	e, ok, shaped := p.keyedExpect(ExpectSQL, r.shape, r.stub, r.at, "query", r.query, path)
	if !shaped {
		return e, false
	}
	if r.args.n != nil {
		good := p.list(r.args.n, r.args.ok, path+".args", "values bound to the query's ? marks")
		for j, a := range r.args.items {
			v, g2 := p.scalarValue(a, fmt.Sprintf("%s.args[%d]", path, j), "a number, a string, a bool or null")
			e.Args = append(e.Args, v)
			good = good && g2
		}
		ok = ok && good
	}
	if p.require(r.shape, "rows", r.at) {
		rows, good := p.sqlRows(r.rows, path+".rows")
		e.Want, e.canon = rows, canonical(rows)
		ok = ok && good
	} else {
		ok = false
	}
	return e, ok
}

// scalarValue reads an SQL value: a scalar, of any kind; want says which
// kinds, for a message.
func (p *parser) scalarValue(n *yaml.Node, path, want string) (any, bool) {
	if n = resolve(n); n.Kind != yaml.ScalarNode {
		p.errorf(n, path, nil, "is %s: want %s", kindName(n), want)
		return nil, false
	}
	return p.value(decodeValue(n), path)
}

// sqlRows reads the rows an SQL expectation wants: a list of rows, each a
// list of values in the query's column order.
func (p *parser) sqlRows(l list[list[*yaml.Node]], path string) ([]any, bool) {
	const want = "rows, each a list of the values of its columns: [[1, alice], [2, bob]], or [] for none"
	if !p.list(l.n, l.ok, path, want) {
		return nil, false
	}
	ok := true
	out := make([]any, 0, len(l.items))
	for i, r := range l.items {
		rp := fmt.Sprintf("%s[%d]", path, i)
		if !p.list(r.n, r.ok, rp, "values, one per column of the query") {
			ok = false
			continue
		}
		row := make([]any, 0, len(r.items))
		for j, vn := range r.items {
			v, g := p.scalarValue(vn, fmt.Sprintf("%s[%d]", rp, j), "a number, a string or null (SQLite's values)")
			row = append(row, v)
			ok = ok && g
		}
		out = append(out, row)
	}
	return out, ok
}

// sqlAnswer is what an SQL expectation's query returned at the end of the
// run: its rows, or the error.
type sqlAnswer struct {
	rows []any
	err  error
}

// querySQL runs the query of each SQL expectation in exps on the object's
// database, while the runtime is still open, for checkEnd.
func (r *Result) querySQL(nss map[*Namespace]*runtime.Namespace, exps []Expectation) {
	for i := range exps {
		e := &exps[i]
		if e.Kind != ExpectSQL {
			continue
		}
		ns := nss[e.Stub.Namespace]
		c, err := ns.Storage(ns.IDFromName(e.Stub.Object)).QuerySQL(context.Background(), e.Key, e.Args...)
		if r.sql == nil {
			r.sql = map[*Expectation]sqlAnswer{}
		}
		if err != nil {
			r.sql[e] = sqlAnswer{err: err}
			continue
		}
		rows := make([]any, 0, c.Len())
		for _, row := range c.Values() {
			rows = append(rows, row)
		}
		r.sql[e] = sqlAnswer{rows: rows}
	}
}

// quoteSQL quotes a query on one line.
func quoteSQL(q string) string { return fmt.Sprintf("%q", strings.Join(strings.Fields(q), " ")) }
