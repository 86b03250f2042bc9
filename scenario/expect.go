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

func (p *parser) parseCallExpect(n *yaml.Node, path string, c *Call) []Expectation {
	f := p.mapping(n, path, ExpectOutcome, ExpectAttempts, ExpectExecutions, ExpectRejected, ExpectCalls,
		ExpectEffects, ExpectResult, ExpectStatus, ExpectBody, ExpectError, ExpectDuration)
	if f == nil {
		return nil
	}
	var out []Expectation
	add := func(vn *yaml.Node, kind string, want any) {
		out = append(out, Expectation{Line: resolve(vn).Line, Path: path + "." + kind, Kind: kind, Want: want, canon: canonical(want)})
	}
	maxAttempts := (stub.MaxMaxRetries + 1) * c.Outer
	// In the order of the fields above, whatever the order in the file.
	for _, kind := range []string{ExpectOutcome, ExpectCalls, ExpectAttempts, ExpectExecutions, ExpectRejected,
		ExpectEffects, ExpectDuration, ExpectResult, ExpectStatus, ExpectBody, ExpectError} {
		vn := f.get(kind)
		if vn == nil {
			continue
		}
		fp := path + "." + kind
		switch kind {
		case ExpectOutcome:
			if v, ok := p.name(vn, fp); ok {
				if !slices.Contains(Outcomes, v) {
					p.errorf(vn, fp, nil, "unknown outcome %s; allowed are %s", quote.Q(v), strings.Join(Outcomes, ", "))
					continue
				}
				add(vn, kind, v)
			}
		case ExpectCalls:
			if v, ok := p.count(vn, fp, 1, c.Outer); ok {
				add(vn, kind, v)
			}
		case ExpectAttempts, ExpectExecutions, ExpectRejected:
			if v, ok := p.count(vn, fp, 0, maxAttempts); ok {
				add(vn, kind, v)
			}
		case ExpectEffects:
			if v, ok := p.count(vn, fp, 0, maxCount); ok {
				add(vn, kind, v)
			}
		case ExpectDuration:
			if v, ok := p.duration(vn, fp); ok {
				add(vn, kind, v)
			}
		case ExpectResult:
			if c.Fetch != nil {
				p.errorf(vn, fp, nil, "a fetch has no result; expect its status and body")
				continue
			}
			if v, ok := p.value(vn, fp); ok {
				add(vn, kind, v)
			}
		case ExpectStatus:
			if c.Fetch == nil {
				p.errorf(vn, fp, nil, "only a fetch has a status; expect a method's result")
				continue
			}
			if v, ok := p.integer(vn, fp, 100, 599); ok {
				add(vn, kind, v)
			}
		case ExpectBody:
			if c.Fetch == nil {
				p.errorf(vn, fp, nil, "only a fetch has a body; expect a method's result")
				continue
			}
			if v, ok := p.str(vn, fp); ok {
				add(vn, kind, v)
			}
		case ExpectError:
			if e, ok := p.parseErrorExpect(vn, fp); ok {
				add(vn, kind, e)
			}
		}
	}
	return out
}

func (p *parser) parseErrorExpect(n *yaml.Node, path string) (ErrorExpectation, bool) {
	var e ErrorExpectation
	rn := resolve(n)
	if rn.Kind == yaml.ScalarNode && rn.Value == "none" {
		e.None = true
		return e, true
	}
	if rn.Kind != yaml.MappingNode {
		p.errorf(rn, path, nil, "is %s: want none (the call succeeds) or a mapping of retryable, overloaded, remote, contains", kindName(rn))
		return e, false
	}
	f := p.mapping(rn, path, "retryable", "overloaded", "remote", "contains")
	if f == nil {
		return e, false
	}
	ok := true
	for _, flag := range []struct {
		name string
		dst  **bool
	}{{"retryable", &e.Retryable}, {"overloaded", &e.Overloaded}, {"remote", &e.Remote}} {
		if vn := f.get(flag.name); vn != nil {
			v, good := p.boolean(vn, path+"."+flag.name)
			if good {
				*flag.dst = &v
			}
			ok = ok && good
		}
	}
	if vn := f.get("contains"); vn != nil {
		v, good := p.name(vn, path+".contains")
		e.Contains = v
		ok = ok && good
	}
	return e, ok
}

// parseEnd reads the expectations on the end state.
func (p *parser) parseEnd(n *yaml.Node) { p.parseEndInto(n, "expect", &p.s.Expect) }

// parseEndInto reads expectations on the end state at path into out.
func (p *parser) parseEndInto(n *yaml.Node, at string, out *[]Expectation) {
	f := p.mapping(n, at, "storage", "effects", "resets", "sql")
	if f == nil {
		return
	}
	if qn := f.get("sql"); qn != nil {
		p.parseSQLExpect(qn, at+".sql", out)
	}
	if sn := f.get("storage"); sn != nil {
		items, _ := p.seq(sn, at+".storage", "{stub, key, value} or {stub, key, absent: true}")
		for i, item := range items {
			if e, ok := p.parseStorageExpect(item, fmt.Sprintf("%s.storage[%d]", at, i)); ok {
				*out = append(*out, e)
			}
		}
	}
	if rn := f.get("resets"); rn != nil {
		keys, vals := p.entries(rn, at+".resets", "STUB: count (N, {min: N}, {max: N})")
		for i, k := range keys {
			path := join(at+".resets", k.Value)
			st := p.stubs[k.Value]
			if st == nil {
				if !p.brokenStubs[k.Value] {
					p.errorf(k, path, nil, "unknown stub %s; defined are %s", quote.Q(k.Value), p.stubNames())
				}
				continue
			}
			if v, ok := p.count(vals[i], path, 0, maxCount); ok {
				*out = append(*out, Expectation{Line: k.Line, Path: path, Kind: ExpectResets, Stub: st, Want: v})
			}
		}
	}
	if en := f.get("effects"); en != nil {
		keys, vals := p.entries(en, at+".effects", "KIND: count (N, {min: N}, {max: N})")
		for i, k := range keys {
			path := join(at+".effects", k.Value)
			if v, ok := p.count(vals[i], path, 0, maxCount); ok {
				*out = append(*out, Expectation{Line: k.Line, Path: path, Kind: ExpectEffectKind, Key: k.Value, Want: v})
			}
		}
	}
}

// parseStorageExpect reads one storage expectation at path: {stub, key,
// value} or {stub, key, absent: true}.
func (p *parser) parseStorageExpect(item *yaml.Node, path string) (Expectation, bool) {
	e := Expectation{Line: resolve(item).Line, Path: path, Kind: ExpectStorage}
	g := p.mapping(item, path, "stub", "key", "value", "absent")
	if g == nil {
		return e, false
	}
	st, ok := p.endStub(g, item, path)
	e.Stub = st
	if kn := g.require(p, "key", item); kn != nil {
		v, good := p.name(kn, path+".key")
		e.Key = v
		ok = ok && good
	} else {
		ok = false
	}
	vn, an := g.get("value"), g.get("absent")
	switch {
	case vn != nil && an != nil:
		p.errorf(an, path+".absent", nil, "give a value or absent: true, not both")
		ok = false
	case vn != nil:
		v, good := p.value(vn, path+".value")
		e.Want, e.canon = v, canonical(v)
		ok = ok && good
	case an != nil:
		v, good := p.boolean(an, path+".absent")
		if good && !v {
			p.errorf(an, path+".absent", nil, "absent: false says nothing; give the value expected instead")
			good = false
		}
		e.Absent = true
		ok = ok && good
	default:
		p.errorf(item, path+".value", nil, "missing: give the value expected, or absent: true")
		ok = false
	}
	return e, ok
}

// endStub reads the stub field of an end-state expectation.
func (p *parser) endStub(g *fields, item *yaml.Node, path string) (*Stub, bool) {
	stn := g.require(p, "stub", item)
	if stn == nil {
		return nil, false
	}
	name, ok := p.name(stn, path+".stub")
	if !ok {
		return nil, false
	}
	st := p.stubs[name]
	if st == nil && !p.brokenStubs[name] {
		p.errorf(stn, path+".stub", nil, "unknown stub %s; defined are %s", quote.Q(name), p.stubNames())
	}
	return st, st != nil
}

// parseSQLExpect reads expectations on an object's SQL database: a query
// and the rows it must return, {stub, query, args, rows}.
func (p *parser) parseSQLExpect(n *yaml.Node, at string, out *[]Expectation) {
	items, _ := p.seq(n, at, "{stub, query, rows} (args optional)")
	for i, item := range items {
		path := fmt.Sprintf("%s[%d]", at, i)
		g := p.mapping(item, path, "stub", "query", "args", "rows")
		if g == nil {
			continue
		}
		e := Expectation{Line: resolve(item).Line, Path: path, Kind: ExpectSQL}
		st, ok := p.endStub(g, item, path)
		e.Stub = st
		if qn := g.require(p, "query", item); qn != nil {
			q, good := p.name(qn, path+".query")
			e.Key = q
			ok = ok && good
		} else {
			ok = false
		}
		if an := g.get("args"); an != nil {
			args, good := p.seq(an, path+".args", "values bound to the query's ? marks")
			for j, a := range args {
				if a = resolve(a); a.Kind != yaml.ScalarNode {
					p.errorf(a, fmt.Sprintf("%s.args[%d]", path, j), nil, "is %s: want a number, a string, a bool or null", kindName(a))
					good = false
					continue
				}
				v, g2 := p.value(a, fmt.Sprintf("%s.args[%d]", path, j))
				e.Args = append(e.Args, v)
				good = good && g2
			}
			ok = ok && good
		}
		if rn := g.require(p, "rows", item); rn != nil {
			rows, good := p.sqlRows(rn, path+".rows")
			e.Want, e.canon = rows, canonical(rows)
			ok = ok && good
		} else {
			ok = false
		}
		if ok {
			*out = append(*out, e)
		}
	}
}

// sqlRows reads the rows an SQL expectation wants: a list of rows, each a
// list of values in the query's column order.
func (p *parser) sqlRows(n *yaml.Node, path string) ([]any, bool) {
	const want = "rows, each a list of the values of its columns: [[1, alice], [2, bob]], or [] for none"
	rows, ok := p.seq(n, path, want)
	if !ok {
		return nil, false
	}
	out := make([]any, 0, len(rows))
	for i, r := range rows {
		rp := fmt.Sprintf("%s[%d]", path, i)
		vals, good := p.seq(r, rp, "values, one per column of the query")
		if !good {
			ok = false
			continue
		}
		row := make([]any, 0, len(vals))
		for j, vn := range vals {
			if vn = resolve(vn); vn.Kind != yaml.ScalarNode {
				p.errorf(vn, fmt.Sprintf("%s[%d]", rp, j), nil, "is %s: want a number, a string or null (SQLite's values)", kindName(vn))
				ok = false
				continue
			}
			v, g := p.value(vn, fmt.Sprintf("%s[%d]", rp, j))
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
