package stubgen_test

import (
	"errors"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/internal/stubgen"
)

var update = flag.Bool("update", false, "rewrite testdata/good/shop_stub.go")

// generate loads dir's classes and writes their stubs.
func generate(dir string, types ...string) ([]byte, error) {
	pkg, err := stubgen.Load(dir, types, "")
	if err != nil {
		return nil, err
	}
	return stubgen.Generate(pkg, "dosim-gen -type "+strings.Join(types, ","))
}

// classStub reads one class of src and writes its stub.
func classStub(src *stubgen.Source, typ string) ([]byte, error) {
	c, err := src.Class(typ)
	if err != nil {
		return nil, err
	}
	return stubgen.Generate(&stubgen.Package{Name: "bad", Path: "bad", Types: src.Types(), Classes: []stubgen.Class{c}}, "dosim-gen -type "+typ)
}

// Every form of Methods the generator understands gives the stub checked
// in beside it (testdata/good/shop_stub.go, which go vet compiles): a
// method value, a function, a literal, a constant key, a value receiver,
// an RPC target's result as a *stub.Stub, parameters renamed where they
// would clash, imports of the parameters' packages, marks in the doc.
func TestTypedStubForms(t *testing.T) {
	got, err := generate("testdata/good", "Shop", "Cart")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "good", "shop_stub.go")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("the stub differs from %s (go test ./internal/stubgen -update rewrites it):\n%s", golden, got)
	}
	for _, line := range []string{
		"func (c ShopStub) Get(ctx context.Context, name string) (Item, error) {",
		`return typed.Call[Item](ctx, c.src, "get", name)`,
		"func (c ShopStub) Open(ctx context.Context) (*stub.Stub, error) {",
		"func (c ShopStub) Rename(ctx context.Context, arg1 string, arg2 map[string][]byte, ctx2 []any) (*Item, error) {",
		"func (c ShopStub) Wait(ctx context.Context, d time.Duration, arg2 int) error {",
		"// Total calls the object's Total. Marked Retryable",
		"// Wait calls the object's Wait. Not marked",
		"func FreshShopStub(ns typed.Namespace, name string, opts ...stub.Option) ShopStub {",
		"func NewCartStub(s *stub.Stub) CartStub {",
	} {
		if !strings.Contains(string(got), line) {
			t.Errorf("the stub has no line %q", line)
		}
	}
	// The package, stub included, compiles.
	if _, err := stubgen.Load("testdata/good", []string{"Shop"}, ""); err != nil {
		t.Fatalf("testdata/good with its stub: %v", err)
	}
}

// Each form the generator does not understand is refused with its
// position and what is wanted (rule: bad input names the field, the value
// and what is allowed).
func TestTypedStubRefusedForms(t *testing.T) {
	src, err := stubgen.Open("testdata/bad", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ  string
		form bool // wraps ErrForm
		want []string
	}{
		{"Promoted", true, []string{"-type Promoted", "promoted from an embedded type", "bad.Inner).Methods", "declare func (x *Promoted) Methods() object.Methods"}},
		{"NoMethods", true, []string{"-type NoMethods", "it has no Methods method"}},
		{"Built", true, []string{"testdata/bad/bad.go:29:1: Methods: form not understood: its body", "its body has 3 statements", `want a body of one statement, return object.Methods{"Name": object.Func(fn), ...}`}},
		{"Called", true, []string{"bad.go:39:", "it returns Inner{}.Methods(), not an object.Methods literal"}},
		{"Computed", true, []string{"bad.go:47:", `Methods entry "A"`, "its value entry is not object.Func(fn) or object.Retryable(fn)"}},
		{"KeyVar", true, []string{"bad.go:55:", "Methods entry name", "the key is not a constant string"}},
		{"NoCtx", false, []string{`Methods entry "A": func(n int) error: does not take a context.Context first; want func(context.Context, args...) (R, error)`}},
		{"Variadic", false, []string{`Methods entry "A"`, "variadic; want func(context.Context"}},
		{"NoError", false, []string{`Methods entry "A"`, "does not return error last"}},
		{"NotFunc", false, []string{`Methods entry "A": 42 is not a function`}},
		{"Dashed", false, []string{`Methods entry "add-one"`, `the name "add-one" is not a Go identifier`, "rename the entry"}},
		{"Clash", false, []string{`its typed method would be Get`, "rename one"}},
		{"Taken", false, []string{"-type Taken", "already declares TakenStub"}},
		{"TooMany", false, []string{`Methods entry "Split"`, "returns 2 values before its error, and a method returns one at most (return a struct of them)"}},
		{"Nothing", false, []string{`Methods entry "Do"`, "returns nothing; want"}},
		{"Piped", false, []string{`Methods entry "Open"`, "result of type github.com/dosim/dosim/internal/stubgen/testdata/bad.pipe: field C: a channel cannot cross a call"}},
		{"Foreign", false, []string{`Methods entry "Put"`, "parameter 2 (s) of type []github.com/dosim/dosim/internal/stubgen/testdata/bad/other.secret",
			"secret is unexported in package github.com/dosim/dosim/internal/stubgen/testdata/bad/other, so the stub's file cannot name it"}},
		{"Nope", false, []string{"-type Nope: package github.com/dosim/dosim/internal/stubgen/testdata/bad declares no type Nope"}},
	} {
		_, err := classStub(src, tc.typ)
		if err == nil {
			t.Errorf("-type %s: generated, want an error", tc.typ)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("-type %s: error %q does not say %q", tc.typ, err, w)
			}
		}
		if errors.Is(err, stubgen.ErrForm) != tc.form {
			t.Errorf("-type %s: errors.Is(err, ErrForm) = %v, want %v", tc.typ, !tc.form, tc.form)
		}
	}
}

// A package that declares a name the stubs' file imports is refused.
func TestTypedStubImportNameTaken(t *testing.T) {
	_, err := generate("testdata/imports", "Box")
	if err == nil || !strings.Contains(err.Error(), "declares typed") || !strings.Contains(err.Error(), "rename it") {
		t.Fatalf("got %v, want the taken name refused", err)
	}
}

// No type asked for, and a directory with no package, are errors.
func TestTypedStubBadLoad(t *testing.T) {
	if _, err := stubgen.Load("testdata/good", nil, ""); err == nil || !strings.Contains(err.Error(), "want -type T") {
		t.Errorf("no type: got %v", err)
	}
	if _, err := stubgen.Load(t.TempDir(), []string{"X"}, ""); err == nil {
		t.Error("an empty directory loaded")
	}
}

// Every generated method says its entry's mark in its doc: "Marked
// Retryable" for an entry wrapped in object.Retryable, "Not marked" for
// object.Func, and an RPC target's result says it never retries.
func TestTypedStubMarksInEveryMethodDoc(t *testing.T) {
	pkg, err := stubgen.Load("testdata/good", []string{"Shop", "Cart"}, "")
	if err != nil {
		t.Fatal(err)
	}
	src, err := stubgen.Generate(pkg, "dosim-gen -type Shop,Cart")
	if err != nil {
		t.Fatal(err)
	}
	docs := methodDocs(t, src)
	n := 0
	for _, c := range pkg.Classes {
		for _, m := range c.Methods {
			gn := strings.ToUpper(m.Name[:1]) + m.Name[1:]
			doc, ok := docs[c.Names().Type+"."+gn]
			if !ok {
				t.Errorf("%s: no generated method %s", c.Name, gn)
				continue
			}
			n++
			want, not := "Marked Retryable: a retry that reaches the object runs it again", "Not marked"
			if !m.Retryable {
				want, not = "Not marked: a retry that reaches the object is refused as a duplicate", "Marked Retryable"
			}
			if !strings.Contains(doc, want) || strings.Contains(doc, not) {
				t.Errorf("%s.%s (Retryable %v): doc %q does not say %q alone", c.Name, gn, m.Retryable, doc, want)
			}
			if m.Target != strings.Contains(doc, "It returns an RPC target") {
				t.Errorf("%s.%s (target %v): doc %q", c.Name, gn, m.Target, doc)
			}
		}
	}
	if n != len(docs) || n < 6 {
		t.Errorf("checked %d methods of %d generated", n, len(docs))
	}
}

// methodDocs maps TYPE.METHOD to the doc of each method src declares.
func methodDocs(t *testing.T, src []byte) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "stub.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil {
			continue
		}
		recv := types.ExprString(fd.Recv.List[0].Type)
		out[recv+"."+fd.Name.Name] = strings.Join(strings.Fields(fd.Doc.Text()), " ") // one line
	}
	return out
}

// An old generated file that no longer compiles (a stub of a method since
// renamed) neither stops the load nor changes the stub: every file that
// starts with Header is read as its package clause only, as it is parsed
// (not through an overlay, which would make go/packages type-check every
// dependency from source).
func TestTypedStubIgnoresABrokenGeneratedFile(t *testing.T) {
	stale := filepath.Join("testdata", "good", "zz_stale_stub.go")
	src := stubgen.Header + " -type Shop; DO NOT EDIT.\n\npackage good\n\nfunc (c ShopStub) Gone() { return undefinedThing }\n"
	if err := os.WriteFile(stale, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(stale) })
	got, err := generate("testdata/good", "Shop", "Cart")
	if err != nil {
		t.Fatalf("a broken generated file stopped the load: %v", err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "good", "shop_stub.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("a broken generated file changed the stub:\n%s", got)
	}
}

// A file of the user's own that does not compile still stops the load,
// naming the error: only generated files are read emptied.
func TestTypedStubRefusesAPackageThatDoesNotCompile(t *testing.T) {
	broken := filepath.Join("testdata", "good", "zz_broken.go")
	if err := os.WriteFile(broken, []byte("package good\n\nvar _ = undefinedThing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(broken) })
	_, err := generate("testdata/good", "Shop")
	if err == nil || !strings.Contains(err.Error(), "does not compile") || !strings.Contains(err.Error(), "undefinedThing") {
		t.Fatalf("err = %v, want the package's compile error", err)
	}
}

// S11 (issue 34): a func crosses a call by reference, so a typed stub
// takes one as a parameter.
func TestTypedStubTakesAFunc(t *testing.T) {
	src, err := stubgen.Open("testdata/bad", "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := classStub(src, "Callback")
	if err != nil {
		t.Fatalf("-type Callback: %v", err)
	}
	if !strings.Contains(string(out), "fn func(int)") {
		t.Errorf("the generated stub does not take fn func(int):\n%s", out)
	}
}

// Issue 36: two classes of one package, one calling the other through
// the other's typed stub, generate together: the package compiles only
// once the stubs exist, and the generator does not need it to (a name it
// writes, undefined until then, is not an error; any other is).
func TestTypedStubsOfClassesThatUseEachOther(t *testing.T) {
	out, err := generate("testdata/pair", "Billing", "Limiter")
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	for _, want := range []string{"func FreshBillingStub(", "func (c BillingStub) Charge(ctx context.Context, cents int) (int, error)", "func FreshLimiterStub("} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the stubs lack %q", want)
		}
	}
	// With the stubs written, the package compiles.
	written := filepath.Join("testdata", "pair", "billing_stub.go")
	if err := os.WriteFile(written, out, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(written)
	if b, err := exec.Command("go", "build", "./testdata/pair").CombinedOutput(); err != nil {
		t.Fatalf("the package with its stubs does not compile: %v\n%s", err, b)
	}
	if err := os.Remove(written); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join("testdata", "pair", "zz_broken.go")
	if err := os.WriteFile(broken, []byte("package pair\n\nvar _ = FreshBilingStub\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(broken) })
	if _, err := generate("testdata/pair", "Billing", "Limiter"); err == nil || !strings.Contains(err.Error(), "FreshBilingStub") {
		t.Fatalf("err = %v, want the misspelt name refused: only the names the generator writes may be undefined", err)
	}
}
