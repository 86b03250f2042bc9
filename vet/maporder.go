package vet

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// MapOrder reports, in object code, map iteration order reaching what a
// run produces: Go randomises it on every range, so the same seed would
// give another answer or trace (rule D1).
var MapOrder = &analysis.Analyzer{
	Name: "maporder",
	Doc: `report map iteration order reaching a dosim method's result, storage, effects or calls

In object code, a range over a map that appends to a slice (or adds to a
string) which the function then returns, stores, records as an effect's
payload or passes to a stub call, with no sort of it in the function; or a
range over a map whose body records an effect or calls a stub. Go's map
order differs from run to run, so the same seed gives another answer or
trace (rule D1). Sort first, or range over slices.Sorted(maps.Keys(m)).`,
	Requires: []*analysis.Analyzer{ObjectCode},
	Run:      runMapOrder,
}

func runMapOrder(pass *analysis.Pass) (any, error) {
	code := pass.ResultOf[ObjectCode].(*Code)
	if skipped(pass) {
		return nil, nil
	}
	r := newReporter(pass)
	for _, fn := range code.Reached {
		fn.walk(func(n ast.Node) bool {
			rs, ok := n.(*ast.RangeStmt)
			if !ok {
				return true
			}
			if _, ok := types.Unalias(pass.TypesInfo.TypeOf(rs.X)).Underlying().(*types.Map); ok {
				checkMapRange(pass, r, fn, rs)
			}
			return true
		})
	}
	return nil, nil
}

// checkMapRange reports one range over a map if its order gets out.
func checkMapRange(pass *analysis.Pass, r *reporter, fn *Fn, rs *ast.RangeStmt) {
	info := pass.TypesInfo
	var built []*types.Var
	var sent string
	ast.Inspect(rs.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if sent == "" && outlet(info, x) {
				sent = funcName(callee(info, x))
			}
		case *ast.AssignStmt:
			if v := grown(info, x); v != nil && v.Pos() < rs.Pos() {
				built = append(built, v)
			}
		}
		return true
	})
	if sent != "" {
		r.reportf(rs.For, "range over a map calls %s in map order, which differs from run to run, so the trace does too (rule D1): range over slices.Sorted(maps.Keys(m)) (reached from %s)", sent, fn.Via)
		return
	}
	for _, v := range built {
		if sorted(info, fn, v) {
			continue
		}
		if where := escapesTo(info, fn, v); where != "" {
			r.reportf(rs.For, "range over a map builds %s, which is %s with no sort of it: map order differs from run to run, so the result does too (rule D1): sort %s first (slices.Sort) or range over slices.Sorted(maps.Keys(m)) (reached from %s)", v.Name(), where, v.Name(), fn.Via)
			return
		}
	}
}

// outlet reports whether call records an effect or calls a stub: what the
// trace shows in order.
func outlet(info *types.Info, call *ast.CallExpr) bool {
	f := callee(info, call)
	return isMethod(f, objectPkg, "State", "Effect") || isMethod(f, stubPkg, "Stub", "Call") ||
		isMethod(f, stubPkg, "Stub", "Fetch") || isMethod(f, stubPkg, "Stub", "Start") || isFunc(f, stubPkg, "CallAs")
}

// stores reports whether call writes storage or sends its arguments out.
func stores(info *types.Info, call *ast.CallExpr) bool {
	f := callee(info, call)
	return outlet(info, call) || isMethod(f, objectPkg, "Storage", "Put") || isMethod(f, objectPkg, "Storage", "PutMany") ||
		isMethod(f, objectPkg, "Storage", "DeleteMany") || isMethod(f, objectPkg, "SQL", "Exec")
}

// grown is the variable an assignment grows: v = append(v, ...) or v += x
// for a string v.
func grown(info *types.Info, as *ast.AssignStmt) *types.Var {
	if len(as.Lhs) != 1 || len(as.Rhs) != 1 {
		return nil
	}
	id, ok := as.Lhs[0].(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := info.Uses[id].(*types.Var)
	if v == nil {
		return nil
	}
	if as.Tok == token.ADD_ASSIGN {
		if b, ok := v.Type().Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
			return v
		}
		return nil
	}
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || as.Tok != token.ASSIGN {
		return nil
	}
	if b, ok := info.Uses[identOf(call.Fun)].(*types.Builtin); ok && b.Name() == "append" && len(call.Args) > 0 && mentions(info, call.Args[0], v) {
		return v
	}
	return nil
}

func identOf(e ast.Expr) *ast.Ident {
	id, _ := ast.Unparen(e).(*ast.Ident)
	return id
}

// mentions reports whether e refers to v.
func mentions(info *types.Info, e ast.Node, v types.Object) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}

// sorted reports whether fn sorts v anywhere: a sort or slices function
// whose name starts with Sort (or sort.Strings, Ints, Float64s, Stable)
// given v.
func sorted(info *types.Info, fn *Fn, v *types.Var) bool {
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found || len(call.Args) == 0 {
			return !found
		}
		f := callee(info, call)
		if f == nil || f.Pkg() == nil {
			return true
		}
		p, name := f.Pkg().Path(), f.Name()
		if (p == "sort" || p == "slices") && (strings.HasPrefix(name, "Sort") || name == "Strings" || name == "Ints" ||
			name == "Float64s" || name == "Stable" || name == "Slice" || name == "SliceStable") && mentions(info, call.Args[0], v) {
			found = true
		}
		return !found
	})
	return found
}

// escapesTo says where v goes out of fn: "returned" or "stored or sent",
// "" if it does not.
func escapesTo(info *types.Info, fn *Fn, v *types.Var) string {
	if fn.Type.Results != nil {
		for _, f := range fn.Type.Results.List {
			for _, name := range f.Names {
				if info.Defs[name] == v {
					return "returned"
				}
			}
		}
	}
	returned, sent := false, false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ReturnStmt:
			for _, e := range x.Results {
				returned = returned || mentions(info, e, v)
			}
		case *ast.CallExpr:
			if stores(info, x) {
				for _, e := range x.Args {
					sent = sent || mentions(info, e, v)
				}
			}
		}
		return !sent
	})
	switch {
	case sent:
		return "stored or sent"
	case returned:
		return "returned"
	}
	return ""
}
