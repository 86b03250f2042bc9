package stubgen

import (
	"bytes"
	"fmt"
	"go/format"
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Import paths the generated code always uses.
const (
	stubPath  = "github.com/dosim/dosim/stub"
	typedPath = "github.com/dosim/dosim/stub/typed"
)

// Names are the identifiers the generated code declares for a class.
type Names struct {
	Type  string // the client type: WalletStub
	New   string // its constructor through one stub: NewWalletStub
	Fresh string // its constructor taking a fresh stub per call: FreshWalletStub
}

// NamesOf returns the names the generated code declares for class: its
// client type class+"Stub" and the constructors "New"+ and "Fresh"+ that
// name, the names for a package of many classes (examples.NewBoothStub).
func NamesOf(class string) Names { return NamesFor(class + "Stub") }

// NamesFor returns the names the generated code declares for the client
// type typ: typ, "New"+typ and "Fresh"+typ. dosim-gen -name Stub gives a
// package of one class wallet.Stub, wallet.NewStub and wallet.FreshStub.
func NamesFor(typ string) Names { return Names{Type: typ, New: "New" + typ, Fresh: "Fresh" + typ} }

// Names returns the names the generated code declares for c: NamesFor
// c.Stub when it is set, else NamesOf c.Name.
func (c Class) Names() Names {
	if c.Stub != "" {
		return NamesFor(c.Stub)
	}
	return NamesOf(c.Name)
}

// sortMethods orders methods by name, for output that does not depend on
// the order of the literal.
func sortMethods(ms []Method) {
	upper := func(s string) string {
		r, n := utf8.DecodeRuneInString(s)
		return string(unicode.ToUpper(r)) + s[n:]
	}
	slices.SortFunc(ms, func(a, b Method) int {
		if c := strings.Compare(upper(a.Name), upper(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// goName is the Go method name of an entry: the name with its first
// letter upper-cased, so that it is exported.
func goName(name string) (string, error) {
	if !token.IsIdentifier(name) {
		return "", fmt.Errorf("the name %q is not a Go identifier, so it cannot be a method of the typed stub; rename the entry", name)
	}
	r, n := utf8.DecodeRuneInString(name)
	return string(unicode.ToUpper(r)) + name[n:], nil
}

// imports gives each package the generated code names a local name.
type imports struct {
	self   *types.Package
	byPath map[string]string // path -> local name
	used   map[string]bool   // local names taken
}

func newImports(self *types.Package) *imports {
	im := &imports{self: self, byPath: map[string]string{}, used: map[string]bool{}}
	im.add("context", "context")
	im.add(stubPath, "stub")
	im.add(typedPath, "typed")
	return im
}

func (im *imports) add(path, name string) string {
	if n, ok := im.byPath[path]; ok {
		return n
	}
	local := name
	for i := 2; im.used[local] || im.self.Scope().Lookup(local) != nil; i++ {
		local = fmt.Sprintf("%s%d", name, i)
	}
	im.byPath[path], im.used[local] = local, true
	return local
}

// qualifier names p in the generated file.
func (im *imports) qualifier(p *types.Package) string {
	if p == im.self {
		return ""
	}
	return im.add(p.Path(), p.Name())
}

// Generate writes the typed stubs of pkg's classes, gofmt'ed. args is the
// command line that wrote it, for the file's first line.
func Generate(pkg *Package, args string) ([]byte, error) {
	for _, name := range []string{"context", "stub", "typed"} {
		if obj := pkg.Types.Scope().Lookup(name); obj != nil {
			return nil, fmt.Errorf("package %s declares %s (%s), a name the typed stubs' file imports; rename it", pkg.Path, name, obj)
		}
	}
	im := newImports(pkg.Types)
	var body bytes.Buffer
	for _, c := range pkg.Classes {
		if err := writeClass(&body, pkg, c, im); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "%s%s; DO NOT EDIT.\n\n", Header, strings.TrimPrefix(args, "dosim-gen"))
	fmt.Fprintf(&out, "package %s\n\nimport (\n", pkg.Name)
	paths := slices.Sorted(maps.Keys(im.byPath))
	slices.SortStableFunc(paths, func(a, b string) int { return boolCmp(isStd(a), isStd(b)) })
	for i, path := range paths {
		if i > 0 && isStd(paths[i-1]) && !isStd(path) {
			out.WriteString("\n")
		}
		name := im.byPath[path]
		if name == lastElem(path) {
			fmt.Fprintf(&out, "\t%q\n", path)
		} else {
			fmt.Fprintf(&out, "\t%s %q\n", name, path)
		}
	}
	out.WriteString(")\n")
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the generated code does not parse (a bug in dosim-gen): %w\n%s", err, out.Bytes())
	}
	return src, nil
}

// isStd reports whether path is the standard library's (no dot in its
// first element).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// boolCmp orders true before false.
func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// comment writes text as a // comment, its lines filled to 76 columns.
func comment(text string) string {
	var b strings.Builder
	line := "//"
	for _, word := range strings.Fields(text) {
		if len(line)+1+len(word) > 76 && line != "//" {
			b.WriteString(line + "\n")
			line = "//"
		}
		line += " " + word
	}
	b.WriteString(line + "\n")
	return b.String()
}

func lastElem(path string) string { return path[strings.LastIndex(path, "/")+1:] }

// writeClass writes one class's client type, constructors and methods.
func writeClass(w *bytes.Buffer, pkg *Package, c Class, im *imports) error {
	n := c.Names()
	for _, id := range []string{n.Type, n.New, n.Fresh} {
		if obj := pkg.Types.Scope().Lookup(id); obj != nil {
			return fmt.Errorf("-type %s: package %s already declares %s (%s); the typed stub needs that name",
				c.Name, pkg.Path, id, obj)
		}
	}
	recv := "(*" + c.Name + ")"
	if !c.Pointer {
		recv = c.Name
	}
	w.WriteString("\n" + comment(fmt.Sprintf("%s is the typed client of %s: a method for each entry of %s.Methods, "+
		"with the entry's Go signature, that calls the entry by its name through stub.Call. "+
		"Its marks are in each method's doc.", n.Type, c.Name, recv)))
	fmt.Fprintf(w, "type %s struct{ src typed.Source }\n\n", n.Type)
	w.WriteString(comment(fmt.Sprintf("%s returns the %s that calls through s. A call that fails with an error "+
		"that is not the object's own answer breaks s (rule L2), and every later call through it fails "+
		"the same way: take a new stub, or use %s.", n.New, n.Type, n.Fresh)))
	fmt.Fprintf(w, "func %s(s *stub.Stub) %s { return %s{src: typed.One(s)} }\n\n", n.New, n.Type, n.Type)
	w.WriteString(comment(fmt.Sprintf("%s returns the %s of the object named name in ns that takes a fresh stub, "+
		"ns.GetByName(name, opts...), for every call, so that a failure that breaks one call's stub "+
		"(rule L2) does not fail the calls after it.", n.Fresh, n.Type)))
	fmt.Fprintf(w, "func %s(ns typed.Namespace, name string, opts ...stub.Option) %s {\n\treturn %s{src: typed.Fresh(ns, name, opts...)}\n}\n",
		n.Fresh, n.Type, n.Type)
	taken := map[string]string{}
	for _, m := range c.Methods {
		gn, err := goName(m.Name)
		if err != nil {
			return fmt.Errorf("%s: Methods entry %q: %w", m.Pos, m.Name, err)
		}
		if other, dup := taken[gn]; dup {
			return fmt.Errorf("%s: Methods entry %q: its typed method would be %s, as %q's is; rename one", m.Pos, m.Name, gn, other)
		}
		taken[gn] = m.Name
		writeMethod(w, n.Type, gn, m, im)
	}
	return nil
}

// writeMethod writes the typed method of one entry.
func writeMethod(w *bytes.Buffer, typ, gn string, m Method, im *imports) {
	res := m.Sig.Results()
	r := ""
	if res.Len() == 2 {
		r = types.TypeString(res.At(0).Type(), im.qualifier) // adds its imports before the parameters are named
	}
	params, names := paramList(m.Sig, im)
	w.WriteString("\n" + comment(fmt.Sprintf("%s calls the object's %s. %s", gn, m.Name, markDoc(m))))
	if m.Doc != "" {
		w.WriteString("//\n")
		for _, line := range strings.Split(m.Doc, "\n") {
			w.WriteString(strings.TrimRight("// "+line, " ") + "\n")
		}
	}
	args := ""
	if len(names) > 0 {
		args = ", " + strings.Join(names, ", ")
	}
	switch {
	case res.Len() == 1:
		fmt.Fprintf(w, "func (c %s) %s(%s) error {\n\treturn typed.Do(ctx, c.src, %q%s)\n}\n", typ, gn, params, m.Name, args)
	case m.Target:
		fmt.Fprintf(w, "func (c %s) %s(%s) (*stub.Stub, error) {\n\treturn typed.Call[*stub.Stub](ctx, c.src, %q%s)\n}\n", typ, gn, params, m.Name, args)
	default:
		fmt.Fprintf(w, "func (c %s) %s(%s) (%s, error) {\n\treturn typed.Call[%s](ctx, c.src, %q%s)\n}\n", typ, gn, params, r, r, m.Name, args)
	}
}

// markDoc says what the entry's mark means for a retry.
func markDoc(m Method) string {
	s := "Marked Retryable: a retry that reaches the object runs it again (rule S6)."
	if !m.Retryable {
		s = "Not marked: a retry that reaches the object is refused as a duplicate, so a call never runs it twice (rule S6)."
	}
	if m.Target {
		s += " It returns an RPC target: the result is a stub of it, which never retries (rule S1)."
	}
	return s
}

// paramList writes "ctx context.Context, a T, ..." for sig, with names that
// clash with nothing the method body uses.
func paramList(sig *types.Signature, im *imports) (string, []string) {
	p := sig.Params()
	typs := make([]string, p.Len())
	for i := 1; i < p.Len(); i++ {
		typs[i] = types.TypeString(p.At(i).Type(), im.qualifier) // adds its imports first
	}
	parts := []string{"ctx context.Context"}
	var names []string
	used := map[string]bool{"ctx": true, "c": true}
	for local := range im.used {
		used[local] = true
	}
	for i := 1; i < p.Len(); i++ {
		name := p.At(i).Name()
		if name == "" || name == "_" || used[name] {
			name = fmt.Sprintf("arg%d", i)
		}
		for used[name] {
			name += "_"
		}
		used[name] = true
		names = append(names, name)
		parts = append(parts, name+" "+typs[i])
	}
	return strings.Join(parts, ", "), names
}
