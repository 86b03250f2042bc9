package house

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ---------------------------------------------------------------------------
// Typed seams (issue 21)
//
// Packages meet through typed, sealed seams (see internal/seal), never
// through variables one package sets for another. Two rules keep it so:
//
//   - wire holds records, not hooks: every package-level variable of
//     internal/wire is an error sentinel, a var with no type written whose
//     value is a call of errors.New or fmt.Errorf. So no variable of func
//     type, of type any or of an interface type, nor a pointer to a table
//     of funcs, waits there for another package to fill it.
//   - init sets its own package's state only: no func init() in any .go
//     file of the module (tests included) assigns to, increments or takes
//     the address of a name reached through an imported package (pkg.V,
//     pkg.V.f, pkg.V[i], *pkg.V), nor calls a function of another of the
//     module's packages. Calls of other modules' functions stay allowed
//     (object's init configures SQLite's lookaside, its one process-wide
//     setting), and so does setting the package's own variables (runtime's
//     default stall limit).

// wireDir is the package whose variables must be error sentinels.
const wireDir = "internal/wire"

// sourceFile is one .go file of the module, module-relative.
type sourceFile struct {
	rel string
	src []byte
}

// walkGoFiles calls fn with the path of every .go file of the module
// under root, tests included, skipping testdata, vendor, hidden and
// underscore folders and nested modules.
func walkGoFiles(root string, fn func(p string) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		return fn(p)
	})
}

// moduleFiles returns every .go file of the module under root (see
// walkGoFiles), module-relative.
func moduleFiles(root string) ([]sourceFile, error) {
	var out []sourceFile
	err := walkGoFiles(root, func(p string) error {
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, sourceFile{rel: filepath.ToSlash(rel), src: src})
		return nil
	})
	return out, err
}

// checkSeams applies both rules to files (module is the module path) and
// returns one error per breach, naming the file and line.
func checkSeams(module string, files []sourceFile) []error {
	var errs []error
	for _, sf := range files {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, sf.rel, sf.src, parser.SkipObjectResolution)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sf.rel, err))
			continue
		}
		if path.Dir(sf.rel) == wireDir && !strings.HasSuffix(sf.rel, "_test.go") {
			errs = append(errs, wireVars(fset, f)...)
		}
		errs = append(errs, initWiring(fset, f, module)...)
	}
	return errs
}

// wireVars reports every package-level variable of f that is not an error
// sentinel.
func wireVars(fset *token.FileSet, f *ast.File) []error {
	var errs []error
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if vs.Type == nil && i < len(vs.Values) && isSentinel(vs.Values[i]) {
					continue
				}
				errs = append(errs, fmt.Errorf("%s: var %s: internal/wire holds shared records, not hooks: its only package-level variables are error sentinels (var ErrX = errors.New(...)); export a typed function or interface from the package that owns the type instead (see internal/seal)",
					fset.Position(name.Pos()), name.Name))
			}
		}
	}
	return errs
}

// isSentinel reports whether e is a call of errors.New or fmt.Errorf.
func isSentinel(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
}

// imports maps the names f's imports are known by to their paths.
func imports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p)
		if regexp.MustCompile(`^v[0-9]+$`).MatchString(name) && path.Dir(p) != "." {
			name = path.Base(path.Dir(p))
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name != "_" && name != "." {
			out[name] = p
		}
	}
	return out
}

// initWiring reports what f's init functions do to other packages.
func initWiring(fset *token.FileSet, f *ast.File, module string) []error {
	pkgs := imports(f)
	// root returns the import path of the package e is reached through,
	// "" when e is not rooted at an imported package's name.
	root := func(e ast.Expr) string {
		for {
			switch x := e.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					return pkgs[id.Name]
				}
				e = x.X
			case *ast.IndexExpr:
				e = x.X
			case *ast.StarExpr:
				e = x.X
			case *ast.ParenExpr:
				e = x.X
			default:
				return ""
			}
		}
	}
	var errs []error
	report := func(n ast.Node, what, p string) {
		errs = append(errs, fmt.Errorf("%s: func init %s package %s: an init sets its own package's state only; export a typed constructor or interface from the package that owns the type and call it where it is needed",
			fset.Position(n.Pos()), what, p))
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != "init" || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				for _, lhs := range x.Lhs {
					if p := root(lhs); p != "" {
						report(lhs, "assigns to a variable of", p)
					}
				}
			case *ast.IncDecStmt:
				if p := root(x.X); p != "" {
					report(x, "changes a variable of", p)
				}
			case *ast.UnaryExpr:
				if p := root(x.X); x.Op == token.AND && p != "" {
					report(x, "takes the address of a variable of", p)
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok {
						if p := pkgs[id.Name]; p == module || strings.HasPrefix(p, module+"/") {
							report(x, "calls "+id.Name+"."+sel.Sel.Name+" of", p)
						}
					}
				}
			}
			return true
		})
	}
	return errs
}

// No hook waits in internal/wire, and no init wires another package.
func TestSeamsAreTyped(t *testing.T) {
	root := moduleRoot(t)
	files, err := moduleFiles(root)
	if err != nil {
		t.Fatalf("house: reading the module's files: %v", err)
	}
	wire := 0
	for _, f := range files {
		if strings.HasPrefix(f.rel, wireDir+"/") {
			wire++
		}
	}
	if wire == 0 {
		t.Fatalf("house: found no file of %s under %s", wireDir, root)
	}
	for _, err := range checkSeams(modulePath(t, root), files) {
		t.Error(err)
	}
}

// The seam checker catches each kind of hook and each kind of init
// wiring, and lets sentinels, own-package state and other modules' calls
// through.
func TestSeamsCheckerCatchesMistakes(t *testing.T) {
	const module = "example.com/m"
	files := []sourceFile{
		{rel: "internal/wire/hooks.go", src: []byte(`package wire

import "errors"

var ErrFine = errors.New("fine")

var NewThing func() any

var Policy any

var (
	Table = &struct{ F func() }{}
	count int
)
`)},
		{rel: "internal/wire/hooks_test.go", src: []byte(`package wire

var testHook func()
`)},
		{rel: "obj/obj.go", src: []byte(`package obj

import (
	"example.com/m/internal/wire"
	w2 "example.com/m/internal/wire"
	"example.com/m/other"
	"github.com/x/lib/v3"
)

var own int

func init() {
	own = 1
	lib.Configure(3)
	wire.NewThing = func() any { return nil }
	w2.Table.F = nil
	wire.Counts[0]++
	other.Register(&wire.Policy)
}
`)},
	}
	text := errors.Join(checkSeams(module, files)...).Error()
	for _, w := range []string{
		"internal/wire/hooks.go:7:5: var NewThing: internal/wire holds shared records, not hooks",
		"internal/wire/hooks.go:9:5: var Policy:",
		"internal/wire/hooks.go:12:2: var Table:",
		"internal/wire/hooks.go:13:2: var count:",
		"obj/obj.go:15:2: func init assigns to a variable of package example.com/m/internal/wire",
		"obj/obj.go:16:2: func init assigns to a variable of package example.com/m/internal/wire",
		"obj/obj.go:17:2: func init changes a variable of package example.com/m/internal/wire",
		"obj/obj.go:18:2: func init calls other.Register of package example.com/m/other",
		"obj/obj.go:18:17: func init takes the address of a variable of package example.com/m/internal/wire",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("the checker should report %q; it reported:\n%s", w, text)
		}
	}
	for _, ok := range []string{"ErrFine", "testHook", "obj/obj.go:13:", "obj/obj.go:14:"} {
		if strings.Contains(text, ok) {
			t.Errorf("the checker should let %s through; it reported:\n%s", ok, text)
		}
	}
}
