package vet

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"

	"golang.org/x/tools/go/analysis"
)

// ObjectCode finds the package's object code (see the package doc): its
// roots and what they reach within the package. It reports nothing; the
// other analyzers use its result, a *Code.
var ObjectCode = &analysis.Analyzer{
	Name:       "objectcode",
	Doc:        "find dosim object code: Methods entries, Alarm, OnError, ServeHTTP, constructors, agent.Retry callbacks and what they reach (reports nothing; its flags apply to every dosimvet analyzer)",
	Run:        runObjectCode,
	ResultType: reflect.TypeFor[*Code](),
}

// Code is the package's functions and which of them are object code.
type Code struct {
	// Funcs is every function of the package with a body, declared or
	// literal, in source order.
	Funcs []*Fn
	// Reached is the object code: the functions reachable from a root, in
	// source order.
	Reached []*Fn
	// Marked is every call of object.Retryable whose argument is a
	// function of the package, with that function.
	Marked []Mark

	byNode map[ast.Node]*Fn
	byFunc map[*types.Func]*Fn
	// byVar is the functions a package-level variable is declared with
	// (var hook = func() {...}, var hook = work): code that uses the
	// variable refers to them.
	byVar map[*types.Var][]*Fn
}

// Fn is one function with a body: a declaration or a literal.
type Fn struct {
	Node ast.Node // *ast.FuncDecl or *ast.FuncLit
	Name string   // T.M, F, or "a func literal in T.M"
	Body *ast.BlockStmt
	Type *ast.FuncType
	// Root says why the function is a root of object code ("" if it is
	// not one); Via, for one that is reached, names the root that reaches
	// it first (breadth first from the roots in source order).
	Root, Via string
	refs      []*Fn // functions it calls or refers to, literals inside it
}

// Mark is one object.Retryable(f) of the package.
type Mark struct {
	Call *ast.CallExpr
	Fn   *Fn
}

// Fn returns the function a node declares, nil if it is not one of the
// package's.
func (c *Code) Fn(n ast.Node) *Fn { return c.byNode[n] }

// Decl returns the package's declaration of f, nil if it has none.
func (c *Code) Decl(f *types.Func) *Fn {
	if f == nil {
		return nil
	}
	return c.byFunc[f.Origin()]
}

// Refs returns the package's functions fn calls or refers to.
func (fn *Fn) Refs() []*Fn { return fn.refs }

// walk calls visit for each node of fn's body in source order, without
// entering the function literals inside it (visit sees each literal).
func (fn *Fn) walk(visit func(ast.Node) bool) {
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		if !visit(n) {
			return false
		}
		_, lit := n.(*ast.FuncLit)
		return !lit
	})
}

func runObjectCode(pass *analysis.Pass) (any, error) {
	c := &Code{byNode: map[ast.Node]*Fn{}, byFunc: map[*types.Func]*Fn{}, byVar: map[*types.Var][]*Fn{}}
	if skipped(pass) {
		return c, nil
	}
	c.collect(pass)
	c.collectVars(pass)
	for _, fn := range c.Funcs {
		c.link(pass, fn)
	}
	c.findRoots(pass)
	c.reach()
	return c, nil
}

// collect lists the package's functions with bodies.
func (c *Code) collect(pass *analysis.Pass) {
	for _, f := range pass.Files {
		if !includeTests && inTest(pass, f.Pos()) {
			continue
		}
		var stack []*Fn
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				return false
			}
			var fn *Fn
			switch x := n.(type) {
			case *ast.GenDecl:
				stack = nil
				return true
			case *ast.FuncDecl:
				if x.Body == nil {
					return false
				}
				fn = &Fn{Node: x, Name: declName(x), Body: x.Body, Type: x.Type}
				if obj, ok := pass.TypesInfo.Defs[x.Name].(*types.Func); ok {
					c.byFunc[obj] = fn
				}
				stack = []*Fn{fn}
			case *ast.FuncLit:
				in := "the package"
				if len(stack) > 0 {
					in = stack[0].Name
				}
				fn = &Fn{Node: x, Name: "a func literal in " + in, Body: x.Body, Type: x.Type}
			default:
				return true
			}
			c.byNode[n] = fn
			c.Funcs = append(c.Funcs, fn)
			return true
		})
	}
}

// collectVars records the functions package-level variables are declared
// with (Code.byVar).
func (c *Code) collectVars(pass *analysis.Pass) {
	for _, f := range pass.Files {
		if !includeTests && inTest(pass, f.Pos()) {
			continue
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					v, ok := pass.TypesInfo.Defs[name].(*types.Var)
					if !ok || i >= len(vs.Values) {
						continue
					}
					if fn := c.target(pass.TypesInfo, vs.Values[i]); fn != nil {
						c.byVar[v] = append(c.byVar[v], fn)
					}
				}
			}
		}
	}
}

// declName is T.M for a method, F for a function.
func declName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + d.Name.Name
		}
		return d.Name.Name
	}
}

// link records what fn calls or refers to among the package's functions.
func (c *Code) link(pass *analysis.Pass, fn *Fn) {
	fn.walk(func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			fn.refs = append(fn.refs, c.byNode[x])
		case *ast.Ident:
			switch u := pass.TypesInfo.Uses[x].(type) {
			case *types.Func:
				if to := c.Decl(u); to != nil {
					fn.refs = append(fn.refs, to)
				}
			case *types.Var:
				fn.refs = append(fn.refs, c.byVar[u]...)
			}
		}
		return true
	})
}

// findRoots marks the roots of object code (see the package doc).
func (c *Code) findRoots(pass *analysis.Pass) {
	info := pass.TypesInfo
	for _, fn := range c.Funcs {
		if d, ok := fn.Node.(*ast.FuncDecl); ok && d.Recv != nil && handler(info, d) {
			fn.Root = fn.Name + " (an object's " + d.Name.Name + ")"
		}
		if constructor(info, fn) && fn.Root == "" {
			fn.Root = fn.Name + " (a constructor)"
		}
		fn.walk(func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			f := callee(info, call)
			var arg ast.Expr
			why := ""
			switch {
			case isFunc(f, objectPkg, "Func"), isFunc(f, objectPkg, "Retryable"):
				arg, why = call.Args[0], "a Methods entry"
			case isFunc(f, agentPkg, "Retry"), isFunc(f, agentPkg, "RetryValue"):
				if len(call.Args) > 1 {
					arg, why = call.Args[1], "an agent.Retry callback"
				}
			}
			if arg == nil {
				return true
			}
			target := c.target(info, arg)
			if target == nil {
				return true
			}
			if target.Root == "" {
				target.Root = target.Name + " (" + why + ")"
			}
			if isFunc(f, objectPkg, "Retryable") {
				c.Marked = append(c.Marked, Mark{Call: call, Fn: target})
			}
			return true
		})
	}
}

// target is the package function an expression names or is.
func (c *Code) target(info *types.Info, e ast.Expr) *Fn {
	if lit, ok := ast.Unparen(e).(*ast.FuncLit); ok {
		return c.byNode[lit]
	}
	return c.Decl(funcOf(info, e))
}

// handler reports whether d is an Alarm, OnError or ServeHTTP method of a
// type that has a Methods method returning object.Methods.
func handler(info *types.Info, d *ast.FuncDecl) bool {
	switch d.Name.Name {
	case "Alarm", "OnError", "ServeHTTP":
	default:
		return false
	}
	obj, ok := info.Defs[d.Name].(*types.Func)
	if !ok {
		return false
	}
	recv := obj.Type().(*types.Signature).Recv().Type()
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	ms := types.NewMethodSet(types.NewPointer(recv))
	sel := ms.Lookup(obj.Pkg(), "Methods")
	if sel == nil {
		return false
	}
	res := sel.Type().(*types.Signature).Results()
	return res.Len() == 1 && isNamed(res.At(0).Type(), objectPkg, "Methods")
}

// constructor reports whether fn takes exactly one *object.State and
// returns one value: what runtime.Namespace takes.
func constructor(info *types.Info, fn *Fn) bool {
	var sig *types.Signature
	switch x := fn.Node.(type) {
	case *ast.FuncDecl:
		if x.Recv != nil {
			return false
		}
		if obj, ok := info.Defs[x.Name].(*types.Func); ok {
			sig = obj.Type().(*types.Signature)
		}
	case *ast.FuncLit:
		sig, _ = info.TypeOf(x).(*types.Signature)
	}
	if sig == nil || sig.Params().Len() != 1 || sig.Results().Len() != 1 {
		return false
	}
	return isNamed(sig.Params().At(0).Type(), objectPkg, "State") && types.IsInterface(sig.Results().At(0).Type())
}

// reach walks from the roots, in source order, breadth first.
func (c *Code) reach() {
	var queue []*Fn
	for _, fn := range c.Funcs {
		if fn.Root != "" {
			fn.Via = fn.Root
			queue = append(queue, fn)
		}
	}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		c.Reached = append(c.Reached, fn)
		for _, to := range fn.refs {
			if to.Via == "" {
				to.Via = fn.Via
				queue = append(queue, to)
			}
		}
	}
	slices.SortStableFunc(c.Reached, func(a, b *Fn) int { return cmpPos(a.Node.Pos(), b.Node.Pos()) })
}

func cmpPos(a, b token.Pos) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
