package vet

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// UnsafeMark reports a function passed to object.Retryable that does not
// look safe to run twice for one request (rules S6, S7). It is a
// heuristic, and says so in its reports.
var UnsafeMark = &analysis.Analyzer{
	Name: "unsafemark",
	Doc: `report an object.Retryable mark that looks unsafe (a heuristic)

A method marked Retryable runs again when a retry of the same request
reaches the object a second time (rule S6), so it must be idempotent. This
reports, in a function passed to object.Retryable (and the package's
functions it calls, two levels down): a storage key read and written back
from the value read (read-modify-write) with no lookup, first, of a key
made from an argument whose found result is tested (the idempotency-key
pattern); and an st.Effect recorded before any lookup of a key made from
an argument. SQL statements given an argument count as such a lookup.`,
	Requires: []*analysis.Analyzer{ObjectCode},
	Run:      runUnsafeMark,
}

// markEvent is one storage or effect operation of a marked function, in
// the order the function makes them.
type markEvent struct {
	pos     token.Pos // in the marked function: the operation or the call that leads to it
	kind    int       // lookupEvent, writeEvent, effectEvent
	key     string    // the key's expression, as written
	tainted bool      // a lookup whose key (or SQL argument) is made from an argument
	idem    bool      // a lookup whose found result is tested, or an SQL one
	rmw     bool      // a write of a value read from the same key
}

const (
	lookupEvent = iota
	writeEvent
	effectEvent
)

func runUnsafeMark(pass *analysis.Pass) (any, error) {
	code := pass.ResultOf[ObjectCode].(*Code)
	if skipped(pass) {
		return nil, nil
	}
	r := newReporter(pass)
	done := map[*Fn]bool{}
	for _, m := range code.Marked {
		if done[m.Fn] {
			continue
		}
		done[m.Fn] = true
		w := &markWalk{pass: pass, code: code, tainted: map[types.Object]bool{}, readFrom: map[types.Object]string{}, found: map[types.Object]int{}}
		w.taintParams(m.Fn.Type, nil)
		w.walk(m.Fn.Body, 0, token.NoPos, m.Fn)
		judgeMark(r, m.Fn, w)
	}
	return nil, nil
}

// judgeMark reports what the events of one marked function show.
func judgeMark(r *reporter, fn *Fn, w *markWalk) {
	anyLookup, idem, effect, rmw := false, false, false, false
	for i, e := range w.events {
		switch e.kind {
		case lookupEvent:
			anyLookup = anyLookup || e.tainted
			idem = idem || e.tainted && (e.idem || w.tested(i))
		case effectEvent:
			if !anyLookup && !effect {
				effect = true
				r.reportf(e.pos, "Retryable %s records an effect (st.Effect) before it looks up any key made from its arguments: when a retry runs it again it records the effect again (rules S6, S7); look up an idempotency key first, as examples/ledger.go does, or leave it unmarked (object.Func). This is a heuristic: if the method is safe, say why with //dosimvet:ok reason", fn.Name)
			}
		case writeEvent:
			if e.rmw && !idem && !rmw {
				rmw = true
				r.reportf(e.pos, "Retryable %s reads %s and writes it back from what it read, with no lookup of a key made from its arguments first: when a retry runs it again it applies the change twice (rules S6, S7); remember an idempotency key in the same transaction and return early when it is found, as examples/ledger.go does, or leave it unmarked (object.Func). This is a heuristic: if the method is safe, say why with //dosimvet:ok reason", fn.Name, e.key)
			}
		}
	}
}

// markWalk collects the events of a marked function, following the
// package's functions it calls.
type markWalk struct {
	pass     *analysis.Pass
	code     *Code
	tainted  map[types.Object]bool   // variables made from the marked function's arguments
	readFrom map[types.Object]string // variables holding what a key held
	found    map[types.Object]int    // a lookup's found result -> its event
	conds    []ast.Expr              // every if condition seen
	events   []markEvent
}

// taintParams taints fn's parameters other than contexts, or, for a
// called function, those whose argument is tainted.
func (w *markWalk) taintParams(ft *ast.FuncType, args []ast.Expr) {
	i := 0
	for _, f := range ft.Params.List {
		names := f.Names
		if len(names) == 0 {
			i++
			continue
		}
		for _, name := range names {
			obj := w.pass.TypesInfo.Defs[name]
			switch {
			case obj == nil || isNamed(obj.Type(), "context", "Context"):
			case args == nil:
				w.tainted[obj] = true
			case i < len(args) && w.isTainted(args[i]):
				w.tainted[obj] = true
			}
			i++
		}
	}
}

func (w *markWalk) isTainted(e ast.Node) bool {
	for obj := range w.tainted {
		if mentions(w.pass.TypesInfo, e, obj) {
			return true
		}
	}
	return false
}

// readKey is the key the first variable e mentions that holds a read
// value was read from, "" if none.
func (w *markWalk) readKey(e ast.Node) string {
	key := ""
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && key == "" {
			key = w.readFrom[w.pass.TypesInfo.Uses[id]]
		}
		return key == ""
	})
	return key
}

// holdsRead reports whether e mentions a variable read from key.
func (w *markWalk) holdsRead(e ast.Node, key string) bool {
	for obj, k := range w.readFrom {
		if k == key && mentions(w.pass.TypesInfo, e, obj) {
			return true
		}
	}
	return false
}

// tested reports whether the found result of lookup i is tested by an if.
func (w *markWalk) tested(i int) bool {
	for obj, j := range w.found {
		if j != i {
			continue
		}
		for _, c := range w.conds {
			if mentions(w.pass.TypesInfo, c, obj) {
				return true
			}
		}
	}
	return false
}

// walk collects the events of body. at, when set, is the call in the
// marked function that leads to body; depth counts the calls followed.
func (w *markWalk) walk(body *ast.BlockStmt, depth int, at token.Pos, self *Fn) {
	handled := map[*ast.CallExpr]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.IfStmt:
			w.conds = append(w.conds, x.Cond)
		case *ast.AssignStmt:
			if len(x.Rhs) == 1 {
				if call, ok := ast.Unparen(x.Rhs[0]).(*ast.CallExpr); ok {
					handled[call] = true
					w.call(call, x.Lhs, depth, at, self)
				}
			}
			w.propagate(x.Lhs, x.Rhs)
		case *ast.ValueSpec:
			lhs := make([]ast.Expr, len(x.Names))
			for i, id := range x.Names {
				lhs[i] = id
			}
			w.propagate(lhs, x.Values)
		case *ast.CallExpr:
			if !handled[x] {
				w.call(x, nil, depth, at, self)
			}
		}
		return true
	})
}

// propagate taints, and marks as read from a key, what is assigned from
// tainted or read values.
func (w *markWalk) propagate(lhs, rhs []ast.Expr) {
	tainted, key := false, ""
	for _, e := range rhs {
		tainted = tainted || w.isTainted(e)
		if k := w.readKey(e); k != "" {
			key = k
		}
	}
	for _, l := range lhs {
		id, ok := l.(*ast.Ident)
		if !ok || id.Name == "_" {
			continue
		}
		obj := w.pass.TypesInfo.ObjectOf(id)
		if tainted {
			w.tainted[obj] = true
		}
		if _, read := w.readFrom[obj]; key != "" && !read {
			w.readFrom[obj] = key
		}
	}
}
