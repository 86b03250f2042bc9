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
// position and what is understood. So is an entry with a parameter or
// result the generated file cannot name (a type another package leaves
// unexported) or that cannot cross a call (a channel or an unsafe
// pointer outside a stub or an RPC target): the error names the entry,
// the parameter and its type (checkTypes).
//
// A class T's client is TStub, with NewTStub and FreshTStub; Class.Stub
// (dosim-gen -name) names it otherwise, for a package of one class.
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
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

// objectPath is the package that declares Methods, Func and Retryable.
const objectPath = "github.com/dosim/dosim/object"

// ErrForm is wrapped by the errors for a Methods the generator does not
// understand.
var ErrForm = errors.New("form not understood")

// Class is one class's method set, as the generator read it.
type Class struct {
	Name    string   // the Go type, e.g. Wallet
	Pointer bool     // Methods is declared on *Name
	Methods []Method // sorted by Name
	// Stub is the client type's name, when it is not Name+"Stub" (see
	// Class.Names): dosim-gen -name.
	Stub string
}

// Method is one entry of a class's Methods.
type Method struct {
	Name      string           // the entry's key: the name callers call
	Retryable bool             // wrapped in object.Retryable
	Sig       *types.Signature // the function's signature (ctx first)
	Target    bool             // its result is an RPC target: callers get a *stub.Stub
	Doc       string           // the doc comment of the method it names, if any
	Pos       string           // where the entry is: FILE:LINE:COL
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
// empty, as is every file dosim-gen wrote, so that a stale stub does not
// stop the package from loading.
func Load(dir string, typeNames []string, output string) (*Package, error) {
	if len(typeNames) == 0 {
		return nil, errors.New("no type named: want -type T[,U...]")
	}
	src, err := open(dir, output, writes(typeNames))
	if err != nil {
		return nil, err
	}
	out := &Package{Name: src.pkg.Name, Path: src.pkg.PkgPath, Types: src.pkg.Types}
	for _, name := range typeNames {
		c, err := src.Class(name)
		if err != nil {
			return nil, err
		}
		out.Classes = append(out.Classes, c)
	}
	return out, nil
}

// Source is a loaded package whose classes can be read one by one.
type Source struct{ pkg *packages.Package }

// Open loads the package in dir, with output and the files dosim-gen
// wrote read as empty (see Load).
func Open(dir, output string) (*Source, error) { return open(dir, output, nil) }

// writes reports the names the stubs of classes declare (TStub, NewTStub,
// FreshTStub for each class T): until the stubs exist, the package's own
// code that uses one does not compile, and that is not an error of the
// package.
func writes(classes []string) func(name string) bool {
	names := map[string]bool{}
	for _, c := range classes {
		names[c+"Stub"], names["New"+c+"Stub"], names["Fresh"+c+"Stub"] = true, true, true
	}
	return func(name string) bool { return names[name] }
}

// open is Open; a type error "undefined: NAME" is ignored when
// generated(NAME) (see writes).
func open(dir, output string, generated func(name string) bool) (*Source, error) {
	emptied := generatedFiles(dir, output)
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax |
			packages.NeedTypesInfo | packages.NeedFiles | packages.NeedImports,
		Dir: dir,
		// The generated files are emptied as they are parsed, not by an
		// Overlay: with an overlay go/packages type-checks every dependency
		// from source (SQLite's 151 files among them), some ten times the
		// time of reading their export data.
		ParseFile: func(fset *token.FileSet, name string, src []byte) (*ast.File, error) {
			if empty, ok := emptied[name]; ok {
				src = empty
			}
			return parser.ParseFile(fset, name, src, parser.AllErrors|parser.ParseComments|parser.SkipObjectResolution)
		},
	}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", dir, err)
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("%s holds %d packages, want 1", dir, len(pkgs))
	}
	pkg := pkgs[0]
	var errs []error
	for _, e := range pkg.Errors {
		// go list compiles the package for its export data with the
		// generated files as they are on disk; its compiler's errors
		// ("# path" and the compiler's lines) are the type check's to
		// judge, which read them emptied.
		if e.Kind == packages.ListError && strings.HasPrefix(e.Msg, "# ") {
			continue
		}
		if name, ok := strings.CutPrefix(e.Msg, "undefined: "); ok && e.Kind == packages.TypeError && generated != nil && generated(name) {
			continue // written by this run (writes)
		}
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("package %s in %s does not compile: %w", pkg.PkgPath, dir, errors.Join(errs...))
	}
	return &Source{pkg: pkg}, nil
}

// Class reads the class name: its Methods declaration and the entries of
// its literal.
func (s *Source) Class(name string) (Class, error) { return readClass(s.pkg, name) }

// Header starts every file dosim-gen writes.
const Header = "// Code generated by dosim-gen"

// generatedFiles returns what empties output and every file
// in dir that dosim-gen wrote: the stubs are written anew, and an old one
// (stale, or beside the output a test writes elsewhere) must neither stop
// the package from compiling nor hold the names the new one declares.
func generatedFiles(dir, output string) map[string][]byte {
	over := map[string][]byte{} // by absolute path, as go list names files
	if output != "" {
		if abs, err := filepath.Abs(output); err == nil {
			output = abs
		}
		if src, ok := emptied(output); ok {
			over[output] = src
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return over // packages.Load says what is wrong with dir
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		p, err := filepath.Abs(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if head, err := os.ReadFile(p); err == nil && strings.HasPrefix(string(head), Header) {
			if src, ok := emptied(p); ok {
				over[p] = src
			}
		}
	}
	return over
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
		return Class{}, fmt.Errorf("-type %s: package %s declares no type %s", name, pkg.PkgPath, name)
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
	for _, el := range lit.Elts {
		m, err := readEntry(pkg, el)
		if err != nil {
			return Class{}, err
		}
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
	return nil, false, fmt.Errorf("-type %s: %w: %s; declare func (x *%s) Methods() object.Methods in package %s",
		obj.Name(), ErrForm, how, obj.Name(), obj.Pkg().Path())
}

// methodsLiteral returns the object.Methods literal decl returns.
func methodsLiteral(pkg *packages.Package, decl *ast.FuncDecl) (*ast.CompositeLit, error) {
	at := position(pkg, decl.Pos())
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
		at = position(pkg, ret.Results[0].Pos())
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
	at := position(pkg, el.Pos())
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
	if err := checkTypes(pkg, sig, m.Target); err != nil {
		return Method{}, fmt.Errorf("%s: Methods entry %q: %s: %w", at, m.Name, types.TypeString(sig, nil), err)
	}
	m.Doc = docOf(pkg, call.Args[0])
	return m, nil
}

// objectFunc returns "Func" or "Retryable" when fun is object's function
// of that name, "" otherwise.
func objectFunc(pkg *packages.Package, fun ast.Expr) string {
	id := calledIdent(fun)
	if id == nil {
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
	case r.Len() == 0:
		return fmt.Errorf("returns nothing; %s", want)
	case !isError(r.At(r.Len() - 1).Type()):
		return fmt.Errorf("does not return error last; %s", want)
	case r.Len() > 2:
		return fmt.Errorf("returns %d values before its error, and a method returns one at most (return a struct of them); %s", r.Len()-1, want)
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
	id := calledIdent(fn)
	if id == nil {
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

// position is p as FILE:LINE:COL, the file relative to the working
// directory when it is below it (go generate runs in the package's).
func position(pkg *packages.Package, p token.Pos) string {
	pos := pkg.Fset.Position(p)
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") {
			pos.Filename = rel
		}
	}
	return pos.String()
}

// exprText is e as written, shortened.
func exprText(e ast.Expr) string {
	s := types.ExprString(e)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// Types returns the loaded package's types.
func (s *Source) Types() *types.Package { return s.pkg.Types }

// calledIdent is the name e refers to, x or the Sel of pkg.x or v.x
// (parentheses dropped), or nil for any other expression.
func calledIdent(e ast.Expr) *ast.Ident {
	switch f := ast.Unparen(e).(type) {
	case *ast.SelectorExpr:
		return f.Sel
	case *ast.Ident:
		return f
	}
	return nil
}
