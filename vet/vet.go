package vet

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// Analyzers returns dosimvet's analyzers: ObjectCode (which finds object
// code and reports nothing), then the five checks.
func Analyzers() []*analysis.Analyzer {
	return []*analysis.Analyzer{ObjectCode, VirtualTime, Scheduler, MapOrder, BrokenStub, UnsafeMark}
}

// dosim is the module path of dosim itself.
const dosim = "github.com/dosim/dosim"

// The dosim packages the analyzers recognise by path.
const (
	objectPkg = dosim + "/object"
	agentPkg  = dosim + "/agent"
	stubPkg   = dosim + "/stub"
)

// okDirective silences one report on its line or the line below.
const okDirective = "//dosimvet:ok"

// Flags of ObjectCode, read by every analyzer.
var (
	includeTests = true // -objectcode.tests
	honourOK     = true // -objectcode.ok
)

func init() {
	ObjectCode.Flags.BoolVar(&includeTests, "tests", true, "analyse _test.go files too (false: leave them out)")
	ObjectCode.Flags.BoolVar(&honourOK, "ok", true, "let a //dosimvet:ok comment silence the report on its line or the next (false: report anyway)")
}

// standard reports whether path looks like a standard-library package:
// its first element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// dosimAPI reports whether path is one of dosim's own packages, other than
// its examples: the simulation's boundary, never followed into.
func dosimAPI(path string) bool {
	if path != dosim && !strings.HasPrefix(path, dosim+"/") {
		return false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(path, dosim), "/")
	return rest != "examples" && !strings.HasPrefix(rest, "examples/") && !strings.HasPrefix(rest, "vet/testdata/")
}

// skipped reports whether an analyzer has nothing to do in pass's
// package: one of the standard library's, which belongs to no module and
// whose path has no dot (a module's package may have none either, but the
// go command says which module it belongs to).
//
// It skips, too, the packages of a versioned dependency (from the module
// cache, not replaced by a local folder): none of them is the user's code,
// and calls into other modules are never followed, so their analysis would
// only cost time (modernc.org/libc alone is large).
func skipped(pass *analysis.Pass) bool {
	if m := pass.Module; m != nil && m.Path != "" { // an empty Module is no module (go/analysis's checker)
		if m.Replace != nil {
			m = m.Replace
		}
		return m.Version != ""
	}
	return standard(pass.Pkg.Path())
}

// moduleOf is the module path of pass's package, "" when the driver does
// not say (GOPATH mode, as in tests).
func moduleOf(pass *analysis.Pass) string {
	if pass.Module == nil {
		return ""
	}
	return pass.Module.Path
}

// reporter reports diagnostics, leaving out those silenced by
// //dosimvet:ok and those in test files when tests are left out.
type reporter struct {
	pass *analysis.Pass
	ok   map[string]map[int]bool // file name -> lines that carry the directive
	seen map[token.Pos]bool      // one report per position
}

func newReporter(pass *analysis.Pass) *reporter {
	r := &reporter{pass: pass, ok: map[string]map[int]bool{}, seen: map[token.Pos]bool{}}
	for _, f := range pass.Files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if c.Text != okDirective && !strings.HasPrefix(c.Text, okDirective+" ") {
					continue
				}
				p := pass.Fset.Position(c.Slash)
				if r.ok[p.Filename] == nil {
					r.ok[p.Filename] = map[int]bool{}
				}
				r.ok[p.Filename][p.Line] = true
			}
		}
	}
	return r
}

// reportf reports at pos unless a directive silences it or the file is
// left out.
func (r *reporter) reportf(pos token.Pos, format string, args ...any) {
	if r.seen[pos] {
		return
	}
	r.seen[pos] = true
	p := r.pass.Fset.Position(pos)
	if !includeTests && strings.HasSuffix(p.Filename, "_test.go") {
		return
	}
	if honourOK && (r.ok[p.Filename][p.Line] || r.ok[p.Filename][p.Line-1]) {
		return
	}
	r.pass.Reportf(pos, format, args...)
}

// inTest reports whether pos is in a _test.go file.
func inTest(pass *analysis.Pass, pos token.Pos) bool {
	return strings.HasSuffix(pass.Fset.Position(pos).Filename, "_test.go")
}

// callee returns the function or method a call calls statically, nil for
// a call through a func value, an interface, a conversion or a builtin.
func callee(info *types.Info, call *ast.CallExpr) *types.Func {
	return funcOf(info, call.Fun)
}

// funcOf returns the function or method e names (f, pkg.F, x.M, T.M,
// F[int]), nil when e names none. Interface methods are returned too.
func funcOf(info *types.Info, e ast.Expr) *types.Func {
	e = ast.Unparen(e)
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	var id *ast.Ident
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		id = x
	case *ast.SelectorExpr:
		id = x.Sel
	default:
		return nil
	}
	f, _ := info.Uses[id].(*types.Func)
	if f == nil {
		return nil
	}
	return f.Origin()
}

// isFunc reports whether f is the package-level function pkg.name.
func isFunc(f *types.Func, pkg, name string) bool {
	return f != nil && f.Pkg() != nil && f.Pkg().Path() == pkg && f.Name() == name && recvNamed(f) == ""
}

// isMethod reports whether f is the method pkg.recv.name (pointer
// receiver or not, or promoted through embedding).
func isMethod(f *types.Func, pkg, recv, name string) bool {
	return f != nil && f.Pkg() != nil && f.Pkg().Path() == pkg && f.Name() == name && recvNamed(f) == recv
}

// recvNamed is the name of f's receiver type, "" for a function.
func recvNamed(f *types.Func) string {
	sig, _ := f.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return ""
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}

// isNamed reports whether t is pkg.name or a pointer to it.
func isNamed(t types.Type, pkg, name string) bool {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkg && n.Obj().Name() == name
}

// funcName is how a report names f: pkg.F or pkg.T.M.
func funcName(f *types.Func) string {
	name := f.Name()
	if r := recvNamed(f); r != "" {
		name = r + "." + name
	}
	if f.Pkg() != nil {
		name = f.Pkg().Name() + "." + name
	}
	return name
}
