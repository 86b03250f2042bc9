// Package stubgen writes typed stubs: for a class's Methods() it reads, by
// static analysis (golang.org/x/tools/go/packages), it writes a Go client
// with one method per entry, with the entry's Go signature. It is the
// library behind cmd/dosim-gen.
//
// The form of Methods it understands is the one dosim's examples use: a
// method of the class (on T or *T, declared in the class's package, not
// promoted from an embedded type) whose body is one return of one
// object.Methods composite literal,
//
//	func (w *Wallet) Methods() object.Methods {
//		return object.Methods{
//			"Deposit": object.Retryable(w.Deposit),
//			"Balance": object.Func(w.Balance),
//		}
//	}
//
// with keys that are constant strings and values that are calls of
// object.Func or object.Retryable on a function of the form
// func(context.Context, args...) (R, error) or func(context.Context,
// args...) error: a method value, a function, or a function literal.
// Anything else (entries added to a map after it is built, an entry
// computed elsewhere, an embedded type's Methods) is refused with its
// position and what is understood.
package stubgen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"strings"

	"golang.org/x/tools/go/packages"
)

// objectPath is the package that declares Methods, Func and Retryable.
const objectPath = "github.com/dosim/dosim/object"

// ErrForm is wrapped by the errors for a Methods the generator does not
// understand.
var ErrForm = errors.New("Methods form not understood")

// Class is one class's method set, as the generator read it.
type Class struct {
	Name    string   // the Go type, e.g. Wallet
	Pointer bool     // Methods is declared on *Name
	Methods []Method // sorted by Name
}

// Method is one entry of a class's Methods.
type Method struct {
	Name      string           // the entry's key: the name callers call
	Retryable bool             // wrapped in object.Retryable
	Sig       *types.Signature // the function's signature (ctx first)
	Target    bool             // its result is an RPC target: callers get a *stub.Stub
	Doc       string           // the doc comment of the method it names, if any
	Pos       token.Position   // where the entry is
}

// Package is a loaded package with the classes asked for.
type Package struct {
	Name    string
	Path    string
	Types   *types.Package
	Classes []Class
}

// Load reads the package in dir and the classes named by typeNames.
// output, if not "", is the file the generator will write: it is read as
// empty, so that a stale stub does not stop the package from loading.
func Load(dir string, typeNames []string, output string) (*Package, error) {
	if len(typeNames) == 0 {
		return nil, errors.New("stubgen: no type named: want -type T[,U...]")
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax |
			packages.NeedTypesInfo | packages.NeedFiles | packages.NeedImports,
		Dir: dir,
	}
	if output != "" {
		if over, ok := emptied(output); ok {
			cfg.Overlay = map[string][]byte{output: over}
		}
	}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return nil, fmt.Errorf("stubgen: loading %s: %w", dir, err)
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("stubgen: %s holds %d packages, want 1", dir, len(pkgs))
	}
	pkg := pkgs[0]
	if len(pkg.Errors) > 0 {
		var errs []error
		for _, e := range pkg.Errors {
			errs = append(errs, e)
		}
		return nil, fmt.Errorf("stubgen: package %s does not compile: %w", pkg.PkgPath, errors.Join(errs...))
	}
	out := &Package{Name: pkg.Name, Path: pkg.PkgPath, Types: pkg.Types}
	for _, name := range typeNames {
		c, err := readClass(pkg, name)
		if err != nil {
			return nil, err
		}
		out.Classes = append(out.Classes, c)
	}
	return out, nil
}

// emptied returns the overlay of an existing output file: its package
// clause only.
func emptied(path string) ([]byte, bool) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.PackageClauseOnly)
	if err != nil {
		return nil, false
	}
	return []byte("package " + f.Name.Name + "\n"), true
}

// readClass finds the type name in pkg, its Methods declaration, and the
// entries of its literal.
func readClass(pkg *packages.Package, name string) (Class, error) {
	obj, ok := pkg.Types.Scope().Lookup(name).(*types.TypeName)
	if !ok {
		return Class{}, fmt.Errorf("stubgen: -type %s: package %s declares no type %s", name, pkg.PkgPath, name)
	}
	decl, ptr, err := methodsDecl(pkg, obj)
	if err != nil {
		return Class{}, err
	}
	lit, err := methodsLiteral(pkg, decl)
	if err != nil {
		return Class{}, err
	}
	c := Class{Name: name, Pointer: ptr}
	seen := map[string]token.Position{}
	for _, el := range lit.Elts {
		m, err := readEntry(pkg, el)
		if err != nil {
			return Class{}, err
		}
		if at, dup := seen[m.Name]; dup {
			return Class{}, fmt.Errorf("%s: Methods entry %q: a second entry of that name (the first is at %s)", m.Pos, m.Name, at)
		}
		seen[m.Name] = m.Pos
		c.Methods = append(c.Methods, m)
	}
	sortMethods(c.Methods)
	return c, nil
}

// methodsDecl finds the declaration of obj's Methods method in pkg's
// files, and whether its receiver is a pointer.
func methodsDecl(pkg *packages.Package, obj *types.TypeName) (*ast.FuncDecl, bool, error) {
	for _, f := range pkg.Syntax {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "Methods" {
				continue
			}
			fn, ok := pkg.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			recv := fn.Signature().Recv().Type()
			ptr := false
			if p, ok := recv.(*types.Pointer); ok {
				recv, ptr = p.Elem(), true
			}
			if named, ok := types.Unalias(recv).(*types.Named); ok && named.Obj() == obj {
				return fd, ptr, nil
			}
		}
	}
	how := "it has no Methods method"
	if sel := types.NewMethodSet(types.NewPointer(obj.Type())).Lookup(obj.Pkg(), "Methods"); sel != nil {
		how = fmt.Sprintf("its Methods is promoted from an embedded type (%s)", sel.Obj().(*types.Func).FullName())
	}
	return nil, false, fmt.Errorf("stubgen: -type %s: %w: %s; declare func (x *%s) Methods() object.Methods in package %s",
		obj.Name(), ErrForm, how, obj.Name(), obj.Pkg().Path())
}

// methodsLiteral returns the object.Methods literal decl returns.
func methodsLiteral(pkg *packages.Package, decl *ast.FuncDecl) (*ast.CompositeLit, error) {
	at := pkg.Fset.Position(decl.Pos())
	const want = "want a body of one statement, return object.Methods{\"Name\": object.Func(fn), ...}"
	if decl.Body == nil || len(decl.Body.List) != 1 {
		return nil, fmt.Errorf("%s: Methods: %w: its body has %d statements; %s", at, ErrForm, stmtCount(decl), want)
	}
	ret, ok := decl.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil, fmt.Errorf("%s: Methods: %w: its statement is not a return of one value; %s", at, ErrForm, want)
	}
	lit, ok := ast.Unparen(ret.Results[0]).(*ast.CompositeLit)
	if !ok || !isObject(pkg.TypesInfo.TypeOf(lit), "Methods") {
		at = pkg.Fset.Position(ret.Results[0].Pos())
		return nil, fmt.Errorf("%s: Methods: %w: it returns %s, not an object.Methods literal; %s", at, ErrForm, exprText(ret.Results[0]), want)
	}
	return lit, nil
}

func stmtCount(decl *ast.FuncDecl) int {
	if decl.Body == nil {
		return 0
	}
	return len(decl.Body.List)
}

// readEntry reads one "Name": object.Func(fn) element.
func readEntry(pkg *packages.Package, el ast.Expr) (Method, error) {
	at := pkg.Fset.Position(el.Pos())
	kv, ok := el.(*ast.KeyValueExpr)
	if !ok {
		return Method{}, fmt.Errorf("%s: Methods entry: %w: not a key: value pair", at, ErrForm)
	}
	tv := pkg.TypesInfo.Types[kv.Key]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		return Method{}, fmt.Errorf("%s: Methods entry %s: %w: the key is not a constant string", at, exprText(kv.Key), ErrForm)
	}
	m := Method{Name: constant.StringVal(tv.Value), Pos: at}
	call, ok := ast.Unparen(kv.Value).(*ast.CallExpr)
	wrap := ""
	if ok {
		wrap = objectFunc(pkg, call.Fun)
	}
	if wrap == "" || len(call.Args) != 1 {
		return Method{}, fmt.Errorf("%s: Methods entry %q: %w: its value %s is not object.Func(fn) or object.Retryable(fn)",
			at, m.Name, ErrForm, exprText(kv.Value))
	}
	m.Retryable = wrap == "Retryable"
	sig, ok := pkg.TypesInfo.TypeOf(call.Args[0]).Underlying().(*types.Signature)
	if !ok {
		return Method{}, fmt.Errorf("%s: Methods entry %q: %s is not a function", at, m.Name, exprText(call.Args[0]))
	}
	if err := checkSig(sig); err != nil {
		return Method{}, fmt.Errorf("%s: Methods entry %q: %s: %w", at, m.Name, types.TypeString(sig, nil), err)
	}
	m.Sig = sig
	m.Target = sig.Results().Len() == 2 && isTarget(pkg, sig.Results().At(0).Type())
	m.Doc = docOf(pkg, call.Args[0])
	return m, nil
}

// objectFunc returns "Func" or "Retryable" when fun is object's function
// of that name, "" otherwise.
func objectFunc(pkg *packages.Package, fun ast.Expr) string {
	var id *ast.Ident
	switch f := ast.Unparen(fun).(type) {
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.Ident:
		id = f
	default:
		return ""
	}
	fn, ok := pkg.TypesInfo.Uses[id].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != objectPath {
		return ""
	}
	if n := fn.Name(); n == "Func" || n == "Retryable" {
		return n
	}
	return ""
}

// isObject reports whether t is object's named type name.
func isObject(t types.Type, name string) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == objectPath && named.Obj().Name() == name
}

// checkSig checks what internal/invoke checks when the object is built.
func checkSig(sig *types.Signature) error {
	const want = "want func(context.Context, args...) (R, error) or func(context.Context, args...) error"
	p, r := sig.Params(), sig.Results()
	switch {
	case sig.Variadic():
		return fmt.Errorf("variadic; %s", want)
	case p.Len() == 0 || !isNamed(p.At(0).Type(), "context", "Context"):
		return fmt.Errorf("does not take a context.Context first; %s", want)
	case !(r.Len() == 1 && isError(r.At(0).Type())) && !(r.Len() == 2 && isError(r.At(1).Type())):
		return fmt.Errorf("does not return error last; %s", want)
	case sig.TypeParams().Len() > 0:
		return fmt.Errorf("generic; %s", want)
	}
	return nil
}

func isNamed(t types.Type, path, name string) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == path && named.Obj().Name() == name
}

func isError(t types.Type) bool { return types.Identical(t, types.Universe.Lookup("error").Type()) }

// isTarget reports whether t implements object.Target (embeds
// object.RpcTarget and has Methods): a caller gets a stub of it.
func isTarget(pkg *packages.Package, t types.Type) bool {
	obj := findObject(pkg.Types)
	if obj == nil {
		return false
	}
	target, ok := obj.Scope().Lookup("Target").(*types.TypeName)
	if !ok {
		return false
	}
	iface, ok := target.Type().Underlying().(*types.Interface)
	return ok && types.Implements(t, iface)
}

// findObject returns package object among p's imports, however deep.
func findObject(p *types.Package) *types.Package {
	seen := map[*types.Package]bool{}
	var walk func(*types.Package) *types.Package
	walk = func(p *types.Package) *types.Package {
		if seen[p] {
			return nil
		}
		seen[p] = true
		if p.Path() == objectPath {
			return p
		}
		for _, q := range p.Imports() {
			if o := walk(q); o != nil {
				return o
			}
		}
		return nil
	}
	return walk(p)
}

// docOf returns the doc comment of the method or function fn names, when
// it is declared in pkg.
func docOf(pkg *packages.Package, fn ast.Expr) string {
	var id *ast.Ident
	switch f := ast.Unparen(fn).(type) {
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.Ident:
		id = f
	default:
		return ""
	}
	obj, ok := pkg.TypesInfo.Uses[id].(*types.Func)
	if !ok {
		return ""
	}
	for _, f := range pkg.Syntax {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil && pkg.TypesInfo.Defs[fd.Name] == obj {
				return strings.TrimSpace(fd.Doc.Text())
			}
		}
	}
	return ""
}

// exprText is e as written, shortened.
func exprText(e ast.Expr) string {
	s := types.ExprString(e)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
