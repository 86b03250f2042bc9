package vet

import (
	"go/ast"
	"go/token"
	"go/types"
)

// call records the event a call of a marked function makes, or follows
// it into a function of the package. lhs is what the call is assigned
// to, if anything.
func (w *markWalk) call(call *ast.CallExpr, lhs []ast.Expr, depth int, at token.Pos, self *Fn) {
	info := w.pass.TypesInfo
	pos := at
	if pos == token.NoPos {
		pos = call.Pos()
	}
	f := callee(info, call)
	arg := func(i int) ast.Expr {
		if i < len(call.Args) {
			return call.Args[i]
		}
		return nil
	}
	lhsObj := func(i int) types.Object {
		if i < len(lhs) {
			if id, ok := lhs[i].(*ast.Ident); ok && id.Name != "_" {
				return info.ObjectOf(id)
			}
		}
		return nil
	}
	switch {
	case isMethod(f, objectPkg, "Storage", "Get") && len(call.Args) >= 3:
		w.read(pos, arg(1), varOf(info, arg(2)), lhsObj(0))
	case isFunc(f, objectPkg, "GetAs") && len(call.Args) >= 3:
		w.read(pos, arg(2), lhsObj(0), lhsObj(1))
	case isMethod(f, objectPkg, "Storage", "GetMany") || isMethod(f, objectPkg, "Storage", "List"):
		if len(call.Args) >= 2 {
			w.events = append(w.events, markEvent{pos: pos, kind: lookupEvent, key: types.ExprString(arg(1)), tainted: w.isTainted(arg(1))})
		}
	case isMethod(f, objectPkg, "SQL", "Exec") || isMethod(f, objectPkg, "Storage", "QuerySQL"):
		tainted := false
		for _, a := range call.Args[min(2, len(call.Args)):] {
			tainted = tainted || w.isTainted(a)
		}
		w.events = append(w.events, markEvent{pos: pos, kind: lookupEvent, key: "SQL", tainted: tainted, idem: true})
	case isMethod(f, objectPkg, "Storage", "Put") && len(call.Args) >= 3:
		key := types.ExprString(arg(1))
		w.events = append(w.events, markEvent{pos: pos, kind: writeEvent, key: key, rmw: w.holdsRead(arg(2), key)})
	case isMethod(f, objectPkg, "State", "Effect"):
		w.events = append(w.events, markEvent{pos: pos, kind: effectEvent})
	default:
		to := w.code.Decl(f)
		if to == nil || to == self || depth >= 2 {
			return
		}
		w.taintParams(to.Type, call.Args)
		w.walk(to.Body, depth+1, pos, self)
	}
}

// read records a lookup of key into v, whose found result goes to found.
func (w *markWalk) read(pos token.Pos, key ast.Expr, v, found types.Object) {
	text := types.ExprString(key)
	if v != nil {
		w.readFrom[v] = text
	}
	if found != nil {
		w.found[found] = len(w.events)
	}
	w.events = append(w.events, markEvent{pos: pos, kind: lookupEvent, key: text, tainted: w.isTainted(key)})
}

// varOf is the variable &v or v names.
func varOf(info *types.Info, e ast.Expr) types.Object {
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		return info.ObjectOf(id)
	}
	return nil
}
