// Package api_test records dosim's public API: every exported name of
// every public package, one line each, in api/dosim.txt, as the Go project
// keeps api/go1.N.txt. The test fails when the API and the file differ,
// listing what was added and what went: an addition is a reviewed line in
// a diff, and a removal is a break of users' code that needs a forwarder
// (//go:fix inline) and a CHANGELOG line. DOSIM_API_UPDATE=1 go test
// ./api rewrites the file.
package api_test

import (
	"fmt"
	"go/types"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// public are the packages whose exported names are dosim's API.
var public = []string{
	"agent", "amplify", "cli", "deploy", "dosimtest", "explore", "object", "render", "runtime",
	"runtime/runtimetest", "scenario", "stub", "stub/typed", "transport", "verify", "vet",
}

const module = "github.com/dosim/dosim/"

// TestAPIIsRecorded: the public API is api/dosim.txt, line for line.
func TestAPIIsRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every public package: run without -short")
	}
	got := apiLines(t)
	if os.Getenv("DOSIM_API_UPDATE") != "" {
		if err := os.WriteFile("dosim.txt", []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile("dosim.txt")
	if err != nil {
		t.Fatalf("%v: DOSIM_API_UPDATE=1 go test ./api writes it", err)
	}
	want := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	added, removed := diff(want, got)
	for _, l := range added {
		t.Errorf("new API, not in api/dosim.txt: %s", l)
	}
	for _, l := range removed {
		t.Errorf("API gone (a break of users' code: keep a //go:fix inline forwarder and say so in CHANGELOG.md): %s", l)
	}
	if len(added)+len(removed) > 0 {
		t.Log("once reviewed: DOSIM_API_UPDATE=1 go test ./api")
	}
}

// Issue 33: the user's API names nothing of the engine's packages: no
// seal.Key (the runtime-only entry points take it under an unexported
// name) and nothing from internal/sched (stub.Conn is the stub's seam).
func TestTheAPINamesNoEnginePackage(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every public package: run without -short")
	}
	for _, l := range apiLines(t) {
		if strings.Contains(l, "seal.") || strings.Contains(l, "sched.") {
			t.Errorf("the API names an engine package: %s", l)
		}
	}
}

// apiLines type-checks the public packages and lists their API, sorted.
func apiLines(t *testing.T) []string {
	t.Helper()
	paths := make([]string, len(public))
	for i, p := range public {
		paths[i] = module + p
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedDeps | packages.NeedImports, Dir: ".."}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("%s: %v", p.PkgPath, p.Errors)
		}
		out = append(out, packageLines(p.Types)...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// packageLines lists one package's exported API.
func packageLines(p *types.Package) []string {
	name := strings.TrimPrefix(p.Path(), module)
	qual := func(o *types.Package) string {
		if o == p {
			return ""
		}
		return o.Name()
	}
	str := func(t types.Type) string { return types.TypeString(t, qual) }
	var out []string
	add := func(format string, args ...any) { out = append(out, "pkg "+name+", "+fmt.Sprintf(format, args...)) }
	scope := p.Scope()
	for _, n := range scope.Names() {
		obj := scope.Lookup(n)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add("const %s %s", n, str(o.Type()))
		case *types.Var:
			add("var %s %s", n, str(o.Type()))
		case *types.Func:
			add("func %s%s", n, strings.TrimPrefix(str(o.Type()), "func"))
		case *types.TypeName:
			out = append(out, typeLines(add, str, o)...)
		}
	}
	return out
}

// typeLines lists an exported type: its kind, its exported fields and its
// exported methods (of T and *T).
func typeLines(add func(string, ...any), str func(types.Type) string, o *types.TypeName) []string {
	n := o.Name()
	if o.IsAlias() {
		add("type %s = %s", n, str(types.Unalias(o.Type())))
		return nil
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		return nil
	}
	tparams := ""
	if tp := named.TypeParams(); tp != nil && tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			ps = append(ps, tp.At(i).Obj().Name()+" "+str(tp.At(i).Constraint()))
		}
		tparams = "[" + strings.Join(ps, ", ") + "]"
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type %s%s struct", n, tparams)
		for i := range u.NumFields() {
			if f := u.Field(i); f.Exported() {
				emb := ""
				if f.Embedded() {
					emb = "embedded "
				}
				add("type %s struct, %s%s %s", n, emb, f.Name(), str(f.Type()))
			}
		}
	case *types.Interface:
		add("type %s%s interface", n, tparams)
		for i := range u.NumMethods() {
			if m := u.Method(i); m.Exported() {
				add("type %s interface, %s%s", n, m.Name(), strings.TrimPrefix(str(m.Type()), "func"))
			}
		}
	default:
		add("type %s%s %s", n, tparams, str(u))
	}
	ms := types.NewMethodSet(types.NewPointer(named))
	for i := range ms.Len() {
		m := ms.At(i).Obj().(*types.Func)
		if !m.Exported() || len(ms.At(i).Index()) > 1 { // a promoted method is its own type's
			continue
		}
		if _, isIface := named.Underlying().(*types.Interface); isIface {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := n
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + n
		}
		add("method (%s) %s%s", recv, m.Name(), strings.TrimPrefix(str(sig), "func"))
	}
	return nil
}

// diff returns the lines of got not in want, and of want not in got.
func diff(want, got []string) (added, removed []string) {
	in := func(s []string, l string) bool { _, ok := slices.BinarySearch(s, l); return ok }
	w := slices.Sorted(slices.Values(want))
	g := slices.Sorted(slices.Values(got))
	for _, l := range g {
		if !in(w, l) {
			added = append(added, l)
		}
	}
	for _, l := range w {
		if !in(g, l) {
			removed = append(removed, l)
		}
	}
	return added, removed
}
