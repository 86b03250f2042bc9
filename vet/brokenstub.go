package vet

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/astutil"
)

// BrokenStub reports a stub used again, in one function, after one of its
// calls failed with an error nobody checked for Remote (rule L2).
var BrokenStub = &analysis.Analyzer{
	Name: "brokenstub",
	Doc: `report a dosim stub used again after a call failed with an error not checked for Remote

A stub breaks when a call fails, after its own retries, with an error that
did not come from the object's code: every later call fails at once with
the same error, without reaching the object (rule L2). In one function, a
stub whose Call, Fetch or stub.CallAs result error is ignored, or checked
by a branch that goes on, and that is then called again (later, or on the
next turn of a loop) is reported, unless the function looks at
stub.Error's Remote, stub.ErrRemote or Stub.Broken. The fix: take a new
stub from the namespace (ns.Get, ns.GetByName) after such an error.`,
	Requires: []*analysis.Analyzer{ObjectCode},
	Run:      runBrokenStub,
}

// stubKey names one stub variable or field: its object and its text (two
// receivers' fields of one name are two stubs).
type stubKey struct {
	obj  types.Object
	text string
}

// stubUse is one call made on a stub, or one assignment of it.
type stubUse struct {
	key   stubKey
	call  *ast.CallExpr // nil for an assignment
	pos   token.Pos
	fails bool // Call, Fetch or CallAs: a call whose error can break the stub
}

func runBrokenStub(pass *analysis.Pass) (any, error) {
	code := pass.ResultOf[ObjectCode].(*Code)
	if skipped(pass) {
		return nil, nil
	}
	r := newReporter(pass)
	for _, fn := range code.Funcs {
		if checksRemote(pass.TypesInfo, fn.Body) {
			continue
		}
		uses, sets := stubUses(pass.TypesInfo, fn.Body)
		for _, u := range uses {
			if u.fails {
				checkStubCall(pass, r, fn, u, uses, sets)
			}
		}
	}
	return nil, nil
}

// checksRemote reports whether body looks at stub.Error's Remote,
// stub.ErrRemote or Stub.Broken: then it tells the errors apart itself.
func checksRemote(info *types.Info, body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || found {
			return !found
		}
		switch obj := info.Uses[id].(type) {
		case *types.Var:
			if obj.Pkg() != nil && obj.Pkg().Path() == stubPkg && (obj.Name() == "Remote" && obj.IsField() || obj.Name() == "ErrRemote") {
				found = true
			}
		case *types.Func:
			found = isMethod(obj, stubPkg, "Stub", "Broken")
		}
		return !found
	})
	return found
}

// stubUses lists the calls made on stubs in body and the assignments to
// stub variables, in source order.
func stubUses(info *types.Info, body *ast.BlockStmt) (uses, sets []stubUse) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			f := callee(info, x)
			var recv ast.Expr
			fails := true
			switch {
			case isMethod(f, stubPkg, "Stub", "Call"), isMethod(f, stubPkg, "Stub", "Fetch"):
				recv = selectorX(x.Fun)
			case isMethod(f, stubPkg, "Stub", "Start"):
				recv, fails = selectorX(x.Fun), false
			case isFunc(f, stubPkg, "CallAs") && len(x.Args) > 1:
				recv = x.Args[1]
			}
			if k, ok := keyOf(info, recv); ok {
				uses = append(uses, stubUse{key: k, call: x, pos: x.Pos(), fails: fails})
			}
		case *ast.AssignStmt:
			for _, l := range x.Lhs {
				if k, ok := keyOf(info, l); ok && isNamed(info.TypeOf(l), stubPkg, "Stub") {
					sets = append(sets, stubUse{key: k, pos: x.Pos()})
				}
			}
		}
		return true
	})
	return uses, sets
}

func selectorX(e ast.Expr) ast.Expr {
	if s, ok := ast.Unparen(e).(*ast.SelectorExpr); ok {
		return s.X
	}
	return nil
}

// keyOf names the stub e is, if it is a variable or a field.
func keyOf(info *types.Info, e ast.Expr) (stubKey, bool) {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		if v, ok := info.ObjectOf(x).(*types.Var); ok {
			return stubKey{obj: v, text: x.Name}, true
		}
	case *ast.SelectorExpr:
		if v, ok := info.ObjectOf(x.Sel).(*types.Var); ok {
			return stubKey{obj: v, text: types.ExprString(x)}, true
		}
	}
	return stubKey{}, false
}

// checkStubCall reports the first use of u's stub that may find it broken
// by u's call.
func checkStubCall(pass *analysis.Pass, r *reporter, fn *Fn, u stubUse, uses, sets []stubUse) {
	path, _ := astutil.PathEnclosingInterval(fileOf(pass, u.pos), u.call.Pos(), u.call.End())
	for _, n := range path {
		if lit, isLit := n.(*ast.FuncLit); isLit && lit != fn.Node {
			return // the call belongs to the literal's own function
		}
		if n == fn.Node {
			break
		}
	}
	until, guarded, ok := errorGuard(pass.TypesInfo, u.call, path)
	if !ok {
		return
	}
	if end := returnsAt(path, fn.Node); end != token.NoPos && (!guarded || end < until) {
		until, guarded = end, true // the block holding the call returns: nothing after it follows
	}
	setBetween := func(from, to token.Pos) bool {
		for _, s := range sets {
			if s.key == u.key && s.pos > from && s.pos < to {
				return true
			}
		}
		return false
	}
	line := pass.Fset.Position(u.pos).Line
	for _, v := range uses {
		if v.key != u.key || v.pos <= u.call.End() || (guarded && v.pos >= until) || setBetween(u.call.End(), v.pos) || exclusive(path, v.pos) {
			continue
		}
		r.reportf(v.pos, "%s may be broken here: its call on line %d can fail with an error nobody checked for Remote, and then every later call fails at once (rule L2): after such an error take a new stub from the namespace (ns.Get, ns.GetByName), or check errors.As(err, &e) && e.Remote", u.key.text, line)
		return
	}
	if guarded {
		return
	}
	if loop := enclosingLoop(path, fn.Node); loop != nil && u.key.obj.Pos() < loop.Pos() && !setBetween(loop.Pos(), loop.End()) {
		r.reportf(u.pos, "%s may be broken when this call runs again in the loop: a failed call whose error nobody checked for Remote breaks the stub, and every later call fails at once (rule L2): take a new stub from the namespace (ns.Get, ns.GetByName) after such an error, or check errors.As(err, &e) && e.Remote", u.key.text)
	}
}

// exclusive reports whether pos is in a branch that cannot run after the
// one path leads through: the else of an if whose body holds path[0], or
// another case of its switch or select.
func exclusive(path []ast.Node, pos token.Pos) bool {
	for i := 1; i < len(path); i++ {
		inside := func(n ast.Node) bool { return n != nil && n.Pos() <= pos && pos < n.End() }
		switch n := path[i].(type) {
		case *ast.IfStmt:
			if path[i-1] == n.Body && inside(n.Else) {
				return true
			}
		case *ast.BlockStmt:
			if i+1 < len(path) {
				if _, isSwitch := path[i+1].(*ast.SwitchStmt); isSwitch && inside(n) && !inside(path[i-1]) {
					return true
				}
				if _, isSwitch := path[i+1].(*ast.TypeSwitchStmt); isSwitch && inside(n) && !inside(path[i-1]) {
					return true
				}
				if _, isSelect := path[i+1].(*ast.SelectStmt); isSelect && inside(n) && !inside(path[i-1]) {
					return true
				}
			}
		}
	}
	return false
}

// fileOf is the file of pass that holds pos.
func fileOf(pass *analysis.Pass, pos token.Pos) *ast.File {
	for _, f := range pass.Files {
		if f.FileStart <= pos && pos < f.FileEnd {
			return f
		}
	}
	return nil
}

// enclosingLoop is the innermost for or range statement of path inside
// the function fn.
func enclosingLoop(path []ast.Node, fn ast.Node) ast.Node {
	for _, n := range path {
		switch n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			return n
		case *ast.FuncLit, *ast.FuncDecl:
			return nil
		}
		if n == fn {
			return nil
		}
	}
	return nil
}

// errorGuard reads how the error of the stub call at path[0] is handled.
// ok is false when no later use can follow a failure (the call is
// returned) or the shape is not one it reads. guarded says that a branch
// on the error leaves the function (or a test helper ends the test), and
// until where uses may still find the stub broken.
func errorGuard(info *types.Info, call *ast.CallExpr, path []ast.Node) (until token.Pos, guarded, ok bool) {
	i := 0
	for i < len(path) {
		if _, isStmt := path[i].(ast.Stmt); isStmt {
			break
		}
		i++
	}
	if i >= len(path)-1 {
		return 0, false, false
	}
	var errVar types.Object
	switch s := path[i].(type) {
	case *ast.ExprStmt:
		return 0, false, true
	case *ast.AssignStmt:
		if len(s.Rhs) != 1 || ast.Unparen(s.Rhs[0]) != call || len(s.Lhs) < 2 {
			return 0, false, false
		}
		id, isID := s.Lhs[len(s.Lhs)-1].(*ast.Ident)
		if !isID {
			return 0, false, false
		}
		if id.Name == "_" {
			return 0, false, true
		}
		errVar = info.ObjectOf(id)
	default:
		return 0, false, false
	}
	if ifs, isIf := path[i+1].(*ast.IfStmt); isIf && ifs.Init == path[i] {
		if expectsFailure(info, ifs, errVar) {
			return 0, false, false
		}
		if mentions(info, ifs.Cond, errVar) && terminates(ifs.Body.List) {
			return ifs.Body.End(), true, true
		}
		return 0, false, true
	}
	for _, next := range after(path[i+1], path[i]) {
		switch s := next.(type) {
		case *ast.IfStmt:
			if expectsFailure(info, s, errVar) {
				return 0, false, false
			}
			if mentions(info, s.Cond, errVar) {
				return s.Body.End(), terminates(s.Body.List), true
			}
		case *ast.ExprStmt:
			c, isCall := s.X.(*ast.CallExpr)
			if !isCall || !mentions(info, c, errVar) {
				continue
			}
			if stopsOnError(c) {
				return s.End(), true, true
			}
			if expectsError(c) {
				return 0, false, false // the error is the one expected: looked at
			}
		}
	}
	return 0, false, true
}

// after is the statements that follow stmt in its parent's list.
func after(parent, stmt ast.Node) []ast.Stmt {
	var list []ast.Stmt
	switch p := parent.(type) {
	case *ast.BlockStmt:
		list = p.List
	case *ast.CaseClause:
		list = p.Body
	case *ast.CommClause:
		list = p.Body
	}
	for i, s := range list {
		if s == stmt {
			return list[i+1:]
		}
	}
	return nil
}

// returnsAt is the end of the innermost block around path[0], within
// fn, that ends by leaving the function; NoPos if none does.
func returnsAt(path []ast.Node, fn ast.Node) token.Pos {
	for i, n := range path[1:] {
		if n == fn || i+2 < len(path) && path[i+2] == fn {
			break // fn's own body ends the function anyway
		}
		switch b := n.(type) {
		case *ast.BlockStmt:
			if terminates(b.List) {
				return b.End()
			}
		case *ast.CaseClause:
			if terminates(b.Body) {
				return b.End()
			}
		case *ast.CommClause:
			if terminates(b.Body) {
				return b.End()
			}
		case *ast.FuncLit:
			return token.NoPos
		}
	}
	return token.NoPos
}

// terminates reports whether a list of statements ends by leaving the
// function: return, goto, panic, or a call that ends the test or the
// process.
func terminates(list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	switch s := list[len(list)-1].(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Tok == token.GOTO
	case *ast.ExprStmt:
		c, ok := s.X.(*ast.CallExpr)
		return ok && (stopsOnError(c) || calledName(c) == "panic")
	}
	return false
}

// stopsOnError reports whether call is one that ends the test or the
// process, one that fails the test (t.Error: the test has failed
// already), or a testify assertion that the error is nil.
func stopsOnError(call *ast.CallExpr) bool {
	switch calledName(call) {
	case "Error", "Errorf", "Fatal", "Fatalf", "Fatalln", "FailNow", "Exit", "Skip", "Skipf", "SkipNow", "Goexit", "Panic", "Panicf", "NoError", "NoErrorf", "Nil":
		return true
	}
	return false
}

// expectsFailure reports whether ifs is a test's "if err == nil {
// t.Error(...) }": the call is expected to fail, and the test knows how.
func expectsFailure(info *types.Info, ifs *ast.IfStmt, errVar types.Object) bool {
	b, ok := ast.Unparen(ifs.Cond).(*ast.BinaryExpr)
	if !ok || b.Op != token.EQL || !mentions(info, b, errVar) {
		return false
	}
	complains := false
	ast.Inspect(ifs.Body, func(n ast.Node) bool {
		if c, isCall := n.(*ast.CallExpr); isCall {
			switch calledName(c) {
			case "Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow":
				complains = true
			}
		}
		return !complains
	})
	return complains
}

// expectsError reports whether call is a testify assertion about which
// error came back (Error, ErrorIs, ErrorContains, EqualError...): a test
// that knows the error it gets.
func expectsError(call *ast.CallExpr) bool {
	name := calledName(call)
	return strings.HasPrefix(name, "Error") || strings.HasPrefix(name, "EqualError")
}

// calledName is the name of the function or method call calls.
func calledName(call *ast.CallExpr) string {
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}
