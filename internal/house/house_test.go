package house

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// moduleRoot walks up from the working directory to the folder that holds
// go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("house: working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("house: no go.mod above the working directory")
		}
		dir = parent
	}
}

// modulePath reads the module line of root's go.mod.
func modulePath(t testing.TB, root string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatalf("house: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	t.Fatalf("house: go.mod has no module line")
	return ""
}

// ---------------------------------------------------------------------------
// The rules table (docs/rules.md)

// rulesFile is the table's path from the module root.
const rulesFile = "docs/rules.md"

// families is how many rules each family of the specification has.
var families = []struct {
	letter string
	count  int
}{
	{letter: "S", count: 15},
	{letter: "O", count: 6},
	{letter: "A", count: 7},
	{letter: "D", count: 3},
	{letter: "L", count: 8},
	{letter: "Q", count: 5},
	{letter: "U", count: 5},
	{letter: "W", count: 5},
	{letter: "H", count: 2},
	{letter: "C", count: 11},
}

// allRules lists every rule id of families, in order.
func allRules() []string {
	var ids []string
	for _, f := range families {
		for i := 1; i <= f.count; i++ {
			ids = append(ids, f.letter+strconv.Itoa(i))
		}
	}
	return ids
}

// place is one file a row names and the declarations it names in it.
type place struct {
	file  string   // from the module root, e.g. stub/stub.go
	decls []string // Func, Type, Type.Method, Var or Const
}

// testRef is one test a row names: package folder and function name.
type testRef struct {
	pkg, name string // e.g. stub, TestRetryRules
}

// row is one rule's row of the table.
type row struct {
	id   string
	line int
	// planned is the issue number a column names instead of code; 0 when
	// the column names code.
	wherePlanned, testPlanned int
	where                     []place
	tests                     []testRef
}

var (
	ruleID    = regexp.MustCompile(`^[A-Z][0-9]+$`)
	plannedRe = regexp.MustCompile(`^planned \(issue ([0-9]+)\)\.?$`)
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	testName  = regexp.MustCompile(`^(Test|Example|Fuzz|Benchmark)[A-Za-z0-9_]*$`)
)

// parseRules reads the rows of every table in src whose first cell is a
// rule id. A row has four cells: rule, what it says, where it lives,
// checked by. The where cell is a list of code spans: a file (ending in
// .go) followed by the declarations it holds; exactly one file, the
// rule's home, comes before the word "with", and the code the rule relies
// on in other files may follow it. The checked-by cell is a
// list of code spans pkg.TestName. Either cell may instead read
// "planned (issue N)". Prose outside code spans is free.
func parseRules(name, src string) ([]row, []error) {
	var rows []row
	var errs []error
	for i, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		id := strings.TrimSpace(cells[0])
		if !ruleID.MatchString(id) {
			continue // a header, a separator or another table
		}
		at := fmt.Sprintf("%s:%d: row %s", name, i+1, id)
		if len(cells) != 4 {
			errs = append(errs, fmt.Errorf("%s: has %d cells, want 4 (rule | what it says | where it lives | checked by); a | inside a cell splits it", at, len(cells)))
			continue
		}
		r := row{id: id, line: i + 1}
		var err error
		if r.wherePlanned, err = planned(cells[2]); err != nil {
			errs = append(errs, fmt.Errorf("%s: where it lives: %w", at, err))
		} else if r.wherePlanned == 0 {
			// One file is the rule's home; the code it relies on elsewhere
			// follows the word "with".
			home, helpers, _ := strings.Cut(cells[2], " with ")
			if r.where, err = parsePlaces(home); err != nil {
				errs = append(errs, fmt.Errorf("%s: where it lives: %w", at, err))
			} else if len(r.where) != 1 {
				errs = append(errs, fmt.Errorf("%s: where it lives: names %d files before \"with\": want the one file that is the rule's home, then \"with\" and the code it relies on", at, len(r.where)))
			}
			more, err := parsePlaces(helpers)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: where it lives, after \"with\": %w", at, err))
			}
			r.where = append(r.where, more...)
		}
		if r.testPlanned, err = planned(cells[3]); err != nil {
			errs = append(errs, fmt.Errorf("%s: checked by: %w", at, err))
		} else if r.testPlanned == 0 {
			r.tests, err = parseTests(cells[3])
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: checked by: %w", at, err))
			}
		}
		rows = append(rows, r)
	}
	return rows, errs
}

// planned returns N for a cell reading "planned (issue N)", 0 for a cell
// with code spans, and an error for a cell with neither.
func planned(cell string) (int, error) {
	cell = strings.TrimSpace(cell)
	if m := plannedRe.FindStringSubmatch(cell); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q: want a positive issue number", cell)
		}
		return n, nil
	}
	if !codeSpan.MatchString(cell) {
		return 0, fmt.Errorf("%q names no code in `backticks` and does not read \"planned (issue N)\"", cell)
	}
	return 0, nil
}

// parsePlaces reads `file.go` `Decl` `Decl` ... `file.go` `Decl` ...
func parsePlaces(cell string) ([]place, error) {
	var out []place
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		tok := strings.TrimSpace(m[1])
		if strings.HasSuffix(tok, ".go") {
			out = append(out, place{file: tok})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("`%s` comes before any `file.go`", tok)
		}
		out[len(out)-1].decls = append(out[len(out)-1].decls, tok)
	}
	for _, p := range out {
		if len(p.decls) == 0 {
			return nil, fmt.Errorf("`%s` names no function or type after it", p.file)
		}
	}
	return out, nil
}

// parseTests reads `pkg.TestName` `pkg/sub.TestName` ...
func parseTests(cell string) ([]testRef, error) {
	var out []testRef
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		tok := strings.TrimSpace(m[1])
		i := strings.LastIndex(tok, ".")
		if i <= 0 || !testName.MatchString(tok[i+1:]) {
			return nil, fmt.Errorf("`%s`: want package.TestName (or Example, Fuzz, Benchmark), e.g. `stub.TestRetryRules`", tok)
		}
		out = append(out, testRef{pkg: tok[:i], name: tok[i+1:]})
	}
	return out, nil
}

// declIndex parses Go files on demand and remembers what they declare.
type declIndex struct {
	root  string
	files map[string]map[string]bool // file -> declared names (Type.Method for methods)
	tests map[string]map[string]bool // package folder -> test, example, fuzz and benchmark names
}

func newDeclIndex(root string) *declIndex {
	return &declIndex{root: root, files: map[string]map[string]bool{}, tests: map[string]map[string]bool{}}
}

// declared returns the names file declares at top level.
func (x *declIndex) declared(file string) (map[string]bool, error) {
	if d, ok := x.files[file]; ok {
		return d, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(x.root, filepath.FromSlash(file)), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	d := map[string]bool{}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			name := decl.Name.Name
			if decl.Recv != nil && len(decl.Recv.List) > 0 {
				name = recvType(decl.Recv.List[0].Type) + "." + name
			}
			d[name] = true
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					d[spec.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						d[n.Name] = true
					}
				}
			}
		}
	}
	x.files[file] = d
	return d, nil
}

// recvType is a receiver's type name without pointer or type parameters.
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return fmt.Sprintf("%T", e)
		}
	}
}

// testsOf returns the test, example, fuzz and benchmark functions
// declared in the _test.go files of the package folder pkg.
func (x *declIndex) testsOf(pkg string) (map[string]bool, error) {
	if d, ok := x.tests[pkg]; ok {
		return d, nil
	}
	dir := filepath.Join(x.root, filepath.FromSlash(pkg))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	d := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && testName.MatchString(fn.Name.Name) {
				d[fn.Name.Name] = true
			}
		}
	}
	x.tests[pkg] = d
	return d, nil
}

// checkRules checks rows against the expected rule ids and the code under
// root: one row per rule, no row for an unknown rule, and every file,
// declaration and test a row names exists.
func checkRules(root, name string, rows []row, want []string) []error {
	var errs []error
	seen := map[string]int{}
	known := map[string]bool{}
	for _, id := range want {
		known[id] = true
	}
	x := newDeclIndex(root)
	for _, r := range rows {
		at := fmt.Sprintf("%s:%d: row %s", name, r.line, r.id)
		if !known[r.id] {
			errs = append(errs, fmt.Errorf("%s: no such rule in the specification", at))
		}
		if prev, dup := seen[r.id]; dup {
			errs = append(errs, fmt.Errorf("%s: second row for %s (the first is on line %d); keep one", at, r.id, prev))
		} else {
			seen[r.id] = r.line
		}
		for _, p := range r.where {
			decls, err := x.declared(p.file)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: where it lives: file %s: %w", at, p.file, err))
				continue
			}
			for _, d := range p.decls {
				if !decls[d] {
					errs = append(errs, fmt.Errorf("%s: where it lives: %s declares no %s", at, p.file, d))
				}
			}
		}
		for _, tr := range r.tests {
			tests, err := x.testsOf(tr.pkg)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: checked by: package %s: %w", at, tr.pkg, err))
				continue
			}
			if !tests[tr.name] {
				errs = append(errs, fmt.Errorf("%s: checked by: no func %s in the _test.go files of package %s", at, tr.name, tr.pkg))
			}
		}
	}
	for _, id := range want {
		if _, ok := seen[id]; !ok {
			errs = append(errs, fmt.Errorf("%s: rule %s has no row; add one (or a row saying \"planned (issue N)\")", name, id))
		}
	}
	return errs
}

// Every rule of the specification has one row in docs/rules.md, and each
// row points at code and tests that exist.
func TestRulesTableIsComplete(t *testing.T) {
	root := moduleRoot(t)
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rulesFile)))
	if err != nil {
		t.Fatalf("house: %v (the rules table must ship with the project)", err)
	}
	rows, errs := parseRules(rulesFile, string(src))
	errs = append(errs, checkRules(root, rulesFile, rows, allRules())...)
	for _, err := range errs {
		t.Error(err)
	}
	if want := len(allRules()); len(rows) != want && len(errs) == 0 {
		t.Errorf("%s: %d rows, want %d", rulesFile, len(rows), want)
	}
}

// The checker fails on a table with a missing rule, a duplicate, an
// unknown rule, a test, a file or a declaration that does not exist, and
// a cell that names nothing; and it passes a correct table.
func TestRulesCheckerCatchesMistakes(t *testing.T) {
	root := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", "package a\n\ntype T[K any] struct{}\n\nfunc (t *T[K]) M() {}\n\nfunc F() {}\n\nconst C = 1\n")
	write("a/a_test.go", "package a\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {}\n\nfunc ExampleF() {}\n\nfunc helper() {}\n")
	want := []string{"X1", "X2", "X3"}

	good := strings.Join([]string{
		"| rule | what it says | where it lives | checked by |",
		"| --- | --- | --- | --- |",
		"| X1 | one | `a/a.go` `F` `T.M` `C` | `a.TestF`, `a.ExampleF` (prose is free) |",
		"| X2 | two | `a/a.go` `T` with `a/a_test.go` `TestF` | `a.TestF` |",
		"| X3 | three | planned (issue 12) | planned (issue 12) |",
	}, "\n")
	rows, errs := parseRules("good.md", good)
	errs = append(errs, checkRules(root, "good.md", rows, want)...)
	if len(errs) != 0 || len(rows) != 3 {
		t.Fatalf("a correct table: %d rows, errors %v", len(rows), errs)
	}
	if rows[2].wherePlanned != 12 || rows[2].testPlanned != 12 {
		t.Errorf("planned row: got issues %d and %d, want 12", rows[2].wherePlanned, rows[2].testPlanned)
	}

	bad := strings.Join([]string{
		"| rule | what it says | where it lives | checked by |",
		"| --- | --- | --- | --- |",
		"| X1 | one | `a/a.go` `F` `T.Gone` | `a.TestF`, `a.TestNoSuchTest` |",
		"| X1 | again | `a/missing.go` `F` | `nopkg.TestF` |",
		"| X9 | unknown | planned (issue 3) | planned (issue 3) |",
		"| X3 | three | somewhere | `a.helper` |",
		"| X2 | two homes | `a/a.go` `F` `a/a_test.go` `TestF` | `a.TestF` |",
	}, "\n")
	rows, errs = parseRules("bad.md", bad)
	errs = append(errs, checkRules(root, "bad.md", rows, want)...)
	text := errors.Join(errs...).Error()
	for _, w := range []string{
		"bad.md:3: row X1: checked by: no func TestNoSuchTest in the _test.go files of package a",
		"bad.md:3: row X1: where it lives: a/a.go declares no T.Gone",
		"bad.md:4: row X1: second row for X1 (the first is on line 3)",
		"bad.md:4: row X1: where it lives: file a/missing.go:",
		"bad.md:4: row X1: checked by: package nopkg:",
		"bad.md:5: row X9: no such rule in the specification",
		`bad.md:6: row X3: where it lives: "somewhere" names no code`,
		"bad.md:6: row X3: checked by: `a.helper`: want package.TestName",
		"bad.md:7: row X2: where it lives: names 2 files before \"with\"",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("the checker should report %q; it reported:\n%s", w, text)
		}
	}
	if n := len(errs); n != 9 {
		t.Errorf("got %d errors, want 9:\n%s", n, text)
	}
	if strings.Contains(text, "rule X2 has no row") {
		t.Errorf("X2 has a row (with two homes): %s", text)
	}

	_, errs = parseRules("cells.md", "| X1 | one | `a/a.go` `F` |\n| X2 | a | b | c | d |\n")
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "has 3 cells, want 4") {
		t.Errorf("rows with the wrong number of cells: got %v", errs)
	}
}

// ---------------------------------------------------------------------------
// Import edges

// edge is an import of package to by package from, both module-relative.
type edge struct{ from, to string }

func (e edge) String() string { return e.from + " -> " + e.to }

// rank places each package of the module in a layer: a package imports
// only packages of a lower rank. A new package gets a rank here, at its
// layer. runtime/runtimetest sits just above render (it writes the HTML
// timeline as an artifact) and below everything heavy (scenario's YAML,
// explore, verify's checks): a test helper imports down, never up. The
// heavy go test entry points (Func, Scenario, Verify) are dosimtest's,
// just above explore, which, like verify, is a plain library.
var rank = map[string]int{
	"transport": 0,

	"internal/atomicfile":  10,
	"internal/buildflags":  10,
	"internal/browsertest": 10,
	"internal/benchratio":  10,
	"internal/clone":       10,
	"internal/fields":      10,
	"internal/optrange":    10,
	"internal/splitmix":    -10,
	"internal/house":       10,
	"internal/layout":      10,
	"internal/quote":       10,
	"internal/sched":       10,
	"internal/seal":        10,
	"internal/ref":         10,
	"internal/spare":       10,
	"internal/stubgen":     10,
	"internal/testrun":     10,
	"internal/untyped":     10,
	"internal/invoke":      11,
	"vet":                  10,
	"internal/wire":        12,
	"internal/turn":        11,
	"internal/errchain":    11,

	"object":                        20,
	"agent":                         25,
	"stub":                          30,
	"stub/typed":                    35,
	"runtime":                       40,
	"verify":                        50,
	"render":                        60,
	"runtime/runtimetest":           62,
	"examples":                      65,
	"examples/wallet":               66,
	"examples/zoo":                  67,
	"amplify":                       68,
	"scenario":                      70,
	"explore":                       80,
	"dosimtest":                     85,
	"cli":                           90,
	"cmd/dosim":                     100,
	"cmd/dosim-gen":                 100,
	"cmd/dosimvet":                  100,
	"examples/wallet/cmd/walletsim": 100,
}

// allowedEdges is every import between the module's packages, grouped by
// the importing package. Each points down (see rank). Add an edge only if
// it points down; the test fails on an entry the code no longer has.
var allowedEdges = map[edge]bool{
	{from: "internal/invoke", to: "internal/clone"}: true,

	{from: "internal/wire", to: "transport"}: true,

	{from: "internal/turn", to: "internal/sched"}: true,

	{from: "internal/errchain", to: "internal/clone"}: true,

	{from: "object", to: "internal/clone"}: true,
	{from: "object", to: "internal/ref"}:   true,
	{from: "object", to: "internal/seal"}:  true,
	{from: "object", to: "internal/turn"}:  true,
	{from: "object", to: "internal/wire"}:  true,

	{from: "agent", to: "internal/clone"}:    true,
	{from: "agent", to: "internal/errchain"}: true,
	{from: "agent", to: "internal/seal"}:     true,
	{from: "agent", to: "internal/turn"}:     true,
	{from: "agent", to: "internal/wire"}:     true,
	{from: "agent", to: "object"}:            true,

	{from: "stub", to: "internal/clone"}:    true,
	{from: "stub", to: "internal/errchain"}: true,
	{from: "stub", to: "internal/quote"}:    true,
	{from: "stub", to: "internal/ref"}:      true,
	{from: "stub", to: "internal/seal"}:     true,
	{from: "stub", to: "internal/spare"}:    true,
	{from: "stub", to: "internal/wire"}:     true,
	{from: "stub", to: "object"}:            true,
	{from: "stub", to: "transport"}:         true,

	{from: "stub/typed", to: "stub"}: true,

	{from: "runtime", to: "agent"}:             true,
	{from: "runtime", to: "internal/clone"}:    true,
	{from: "runtime", to: "internal/errchain"}: true,
	{from: "runtime", to: "internal/fields"}:   true,
	{from: "runtime", to: "internal/invoke"}:   true,
	{from: "runtime", to: "internal/layout"}:   true,
	{from: "runtime", to: "internal/sched"}:    true,
	{from: "runtime", to: "internal/seal"}:     true,
	{from: "runtime", to: "internal/spare"}:    true,
	{from: "runtime", to: "internal/turn"}:     true,
	{from: "runtime", to: "internal/wire"}:     true,
	{from: "runtime", to: "object"}:            true,
	{from: "runtime", to: "stub"}:              true,
	{from: "runtime", to: "transport"}:         true,

	{from: "runtime/runtimetest", to: "internal/testrun"}: true,
	{from: "runtime/runtimetest", to: "render"}:           true,
	{from: "runtime/runtimetest", to: "runtime"}:          true,

	{from: "verify", to: "internal/fields"}:      true,
	{from: "cli", to: "internal/optrange"}:       true,
	{from: "transport", to: "internal/splitmix"}: true,
	{from: "explore", to: "internal/splitmix"}:   true,
	{from: "runtime", to: "internal/splitmix"}:   true,
	{from: "verify", to: "object"}:               true,
	{from: "explore", to: "internal/optrange"}:   true,
	{from: "scenario", to: "internal/optrange"}:  true,
	{from: "verify", to: "runtime"}:              true,
	{from: "verify", to: "stub"}:                 true,
	{from: "verify", to: "transport"}:            true,

	{from: "render", to: "internal/clone"}:  true,
	{from: "render", to: "internal/layout"}: true,
	{from: "render", to: "object"}:          true,
	{from: "render", to: "runtime"}:         true,
	{from: "render", to: "transport"}:       true,

	{from: "examples", to: "agent"}:         true,
	{from: "examples", to: "object"}:        true,
	{from: "examples/wallet", to: "object"}: true,
	{from: "examples/zoo", to: "agent"}:     true,
	{from: "examples/zoo", to: "examples"}:  true,
	{from: "examples/zoo", to: "object"}:    true,
	{from: "examples/zoo", to: "runtime"}:   true,
	{from: "examples/zoo", to: "stub"}:      true,
	{from: "examples/zoo", to: "transport"}: true,
	{from: "examples", to: "runtime"}:       true,
	{from: "examples", to: "stub"}:          true,
	{from: "examples", to: "stub/typed"}:    true, // its generated typed stubs
	{from: "examples", to: "transport"}:     true,

	{from: "examples/wallet", to: "stub"}:       true, // its generated typed stub
	{from: "examples/wallet", to: "stub/typed"}: true,

	{from: "amplify", to: "runtime"}:   true,
	{from: "amplify", to: "stub"}:      true,
	{from: "amplify", to: "transport"}: true,

	{from: "scenario", to: "internal/clone"}: true,
	{from: "scenario", to: "internal/quote"}: true,
	{from: "scenario", to: "object"}:         true,
	{from: "scenario", to: "render"}:         true,
	{from: "scenario", to: "runtime"}:        true,
	{from: "scenario", to: "stub"}:           true,
	{from: "scenario", to: "transport"}:      true,

	{from: "explore", to: "internal/atomicfile"}: true,
	{from: "explore", to: "internal/quote"}:      true,
	{from: "explore", to: "internal/seal"}:       true, // runtime.Outcome, the checker's own entry point
	{from: "explore", to: "object"}:              true,
	{from: "explore", to: "render"}:              true,
	{from: "explore", to: "runtime"}:             true,
	{from: "explore", to: "scenario"}:            true,
	{from: "explore", to: "stub"}:                true,
	{from: "explore", to: "transport"}:           true,

	{from: "dosimtest", to: "explore"}:             true,
	{from: "dosimtest", to: "internal/testrun"}:    true,
	{from: "dosimtest", to: "runtime"}:             true,
	{from: "dosimtest", to: "runtime/runtimetest"}: true, // the deprecated ReplayCommand forwards to its one home
	{from: "dosimtest", to: "scenario"}:            true,
	{from: "dosimtest", to: "transport"}:           true, // -dosim.faults: the fault set a replay runs
	{from: "dosimtest", to: "verify"}:              true,

	{from: "cli", to: "amplify"}:             true,
	{from: "cli", to: "internal/atomicfile"}: true,
	{from: "cli", to: "internal/quote"}:      true,
	{from: "cli", to: "examples"}:            true,
	{from: "cli", to: "explore"}:             true,
	{from: "cli", to: "object"}:              true,
	{from: "cli", to: "render"}:              true,
	{from: "cli", to: "runtime"}:             true,
	{from: "cli", to: "scenario"}:            true,
	{from: "cli", to: "stub"}:                true,
	{from: "cli", to: "transport"}:           true,
	{from: "cli", to: "verify"}:              true,

	{from: "cmd/dosim", to: "cli"}: true,

	{from: "cmd/dosim-gen", to: "internal/stubgen"}: true,

	{from: "cmd/dosimvet", to: "vet"}: true,

	{from: "examples/wallet/cmd/walletsim", to: "cli"}:             true,
	{from: "examples/wallet/cmd/walletsim", to: "examples/wallet"}: true,
	{from: "examples/wallet/cmd/walletsim", to: "runtime"}:         true,
}

// knownUpward is every import that points up today: none since issue 10
// moved runtimetest's heavy helpers beside explore and verify (issue 21
// moved them on to dosimtest). The test fails on a new upward import, and
// on an entry here that the code no longer has, so the list only shrinks.
var knownUpward = map[edge]bool{}

// moduleImports returns every package of the module under root (folders
// holding non-test .go files, module-relative, "." for the root) and the
// imports between them, read from the non-test files with go/parser.
func moduleImports(root, module string) (map[string]bool, map[edge]bool, error) {
	pkgs := map[string]bool{}
	edges := map[edge]bool{}
	err := walkGoFiles(root, func(p string) error {
		if strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if ignored(f) {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		from := filepath.ToSlash(rel)
		pkgs[from] = true
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", p, imp.Path.Value, err)
			}
			switch {
			case ip == module:
				edges[edge{from: from, to: "."}] = true
			case strings.HasPrefix(ip, module+"/"):
				edges[edge{from: from, to: strings.TrimPrefix(ip, module+"/")}] = true
			}
		}
		return nil
	})
	return pkgs, edges, err
}

// ignored reports whether a file is excluded from every build by a
// //go:build ignore line.
func ignored(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			return !expr.Eval(func(tag string) bool { return tag != "ignore" })
		}
	}
	return false
}

// checkEdges compares the edges found with the lists: every package has a
// rank; a downward edge is in allowed; an upward edge (to a package of the
// same or a higher rank) is in upward; and every entry of either list, and
// of rank, is still in the code.
func checkEdges(pkgs map[string]bool, edges map[edge]bool, rank map[string]int, allowed, upward map[edge]bool) []error {
	var errs []error
	const list = "internal/house/house_test.go"
	for _, p := range slices.Sorted(maps.Keys(pkgs)) {
		if _, ok := rank[p]; !ok {
			errs = append(errs, fmt.Errorf("package %s has no rank: add it to rank in %s, at its layer", p, list))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(rank)) {
		if !pkgs[p] {
			errs = append(errs, fmt.Errorf("rank lists package %s, which no longer exists: remove it from %s", p, list))
		}
	}
	up := func(e edge) bool {
		rf, okf := rank[e.from]
		rt, okt := rank[e.to]
		return okf && okt && rf <= rt
	}
	for _, e := range sortedEdges(edges) {
		switch {
		case up(e) && !upward[e]:
			errs = append(errs, fmt.Errorf("new upward import %s: %s (rank %d) must not import %s (rank %d); move the shared code down instead",
				e, e.from, rank[e.from], e.to, rank[e.to]))
		case up(e):
		case !allowed[e]:
			errs = append(errs, fmt.Errorf("new import %s: not in allowedEdges; add {from: %q, to: %q} to allowedEdges in %s only if it points down (here %d > %d)",
				e, e.from, e.to, list, rank[e.from], rank[e.to]))
		}
	}
	for _, e := range sortedEdges(allowed) {
		switch {
		case !edges[e]:
			errs = append(errs, fmt.Errorf("allowedEdges lists %s, which the code no longer has: remove it from %s", e, list))
		case up(e):
			errs = append(errs, fmt.Errorf("allowedEdges lists %s, which points up (rank %d -> %d): an upward edge is never allowed", e, rank[e.from], rank[e.to]))
		}
	}
	for _, e := range sortedEdges(upward) {
		switch {
		case !edges[e]:
			errs = append(errs, fmt.Errorf("knownUpward lists %s, which the code no longer has: good, now remove it from %s", e, list))
		case !up(e):
			errs = append(errs, fmt.Errorf("knownUpward lists %s, which points down (rank %d -> %d): move it to allowedEdges", e, rank[e.from], rank[e.to]))
		}
	}
	return errs
}

func sortedEdges(m map[edge]bool) []edge {
	out := slices.Collect(maps.Keys(m))
	slices.SortFunc(out, func(a, b edge) int {
		if c := strings.Compare(a.from, b.from); c != 0 {
			return c
		}
		return strings.Compare(a.to, b.to)
	})
	return out
}

// No package imports one above it, and the lists of imports stay exact.
func TestImportEdges(t *testing.T) {
	root := moduleRoot(t)
	pkgs, edges, err := moduleImports(root, modulePath(t, root))
	if err != nil {
		t.Fatalf("house: reading the module's imports: %v", err)
	}
	if len(edges) == 0 {
		t.Fatalf("house: found no import between the module's packages under %s", root)
	}
	for _, err := range checkEdges(pkgs, edges, rank, allowedEdges, knownUpward) {
		t.Error(err)
	}
}

// The edge checker fails on a new upward edge, a new downward edge not
// listed, stale entries, and a package without a rank.
func TestImportEdgesCheckerCatchesMistakes(t *testing.T) {
	ranks := map[string]int{"low": 0, "mid": 1, "high": 2, "gone": 3}
	pkgs := map[string]bool{"low": true, "mid": true, "high": true, "new": true}
	edges := map[edge]bool{
		{from: "mid", to: "low"}:  true, // listed
		{from: "high", to: "low"}: true, // down, not listed
		{from: "low", to: "mid"}:  true, // up, not known
		{from: "mid", to: "high"}: true, // up, known
	}
	allowed := map[edge]bool{{from: "mid", to: "low"}: true, {from: "high", to: "mid"}: true}
	upward := map[edge]bool{{from: "mid", to: "high"}: true, {from: "low", to: "high"}: true}
	text := errors.Join(checkEdges(pkgs, edges, ranks, allowed, upward)...).Error()
	for _, w := range []string{
		"package new has no rank",
		"rank lists package gone, which no longer exists",
		"new import high -> low: not in allowedEdges; add {from: \"high\", to: \"low\"}",
		"new upward import low -> mid: low (rank 0) must not import mid (rank 1)",
		"allowedEdges lists high -> mid, which the code no longer has",
		"knownUpward lists low -> high, which the code no longer has",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("the checker should report %q; it reported:\n%s", w, text)
		}
	}
	if strings.Contains(text, "mid -> high") || strings.Contains(text, "mid -> low") {
		t.Errorf("a known upward edge and a listed edge pass; got:\n%s", text)
	}
}

// ---------------------------------------------------------------------------
// Testing code stays out of the libraries

// libraryFolders are the folders (and what lies under them) whose non-test
// files must not import package testing or a testing/ package: the
// libraries the dosim command links, which a test helper sits beside, as
// net/http/httptest beside net/http.
var libraryFolders = []string{"explore", "verify", "scenario", "runtime", "stub", "object", "cli"}

// testHelpers are the packages made for tests to import, which may import
// testing: the go test entry points and the light runtime harness.
var testHelpers = map[string]bool{"dosimtest": true, "runtime/runtimetest": true}

// fileImports returns the import paths of every non-test .go file of the
// module under root, by file (module-relative, slash-separated), read
// with go/parser; files a //go:build ignore line excludes are left out.
func fileImports(root string) (map[string][]string, error) {
	files := map[string][]string{}
	err := walkGoFiles(root, func(p string) error {
		if strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if ignored(f) {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		imports := []string{}
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", p, imp.Path.Value, err)
			}
			imports = append(imports, ip)
		}
		files[filepath.ToSlash(rel)] = imports
		return nil
	})
	return files, err
}

// under reports whether the file or folder p lies in folder dir.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// checkNoTesting reports every file under folders, outside the helpers'
// own folders, that imports testing or a testing/ package, and every
// folder or helper listed that holds no file any more.
func checkNoTesting(files map[string][]string, folders []string, helpers map[string]bool) []error {
	var errs []error
	const list = "internal/house/house_test.go"
	for _, dir := range folders {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(files)), func(f string) bool { return under(f, dir) }) {
			errs = append(errs, fmt.Errorf("libraryFolders lists %s, which holds no Go file any more: remove it from %s", dir, list))
		}
	}
	for _, h := range slices.Sorted(maps.Keys(helpers)) {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(files)), func(f string) bool { return path.Dir(f) == h }) {
			errs = append(errs, fmt.Errorf("testHelpers lists %s, which is no package any more: remove it from %s", h, list))
		}
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		if helpers[path.Dir(f)] || !slices.ContainsFunc(folders, func(dir string) bool { return under(f, dir) }) {
			continue
		}
		for _, ip := range files[f] {
			if ip == "testing" || strings.HasPrefix(ip, "testing/") {
				errs = append(errs, fmt.Errorf("%s imports %q: a library the dosim command links carries no test code; put a go test entry point in package dosimtest (or a test helper package listed in testHelpers in %s)", f, ip, list))
			}
		}
	}
	return errs
}

// No library the dosim command links imports package testing: explore and
// verify are plain libraries, and the go test entry points are dosimtest's.
func TestLibrariesImportNoTesting(t *testing.T) {
	files, err := fileImports(moduleRoot(t))
	if err != nil {
		t.Fatalf("house: reading the module's imports: %v", err)
	}
	if len(files) == 0 {
		t.Fatalf("house: found no Go file")
	}
	for _, err := range checkNoTesting(files, libraryFolders, testHelpers) {
		t.Error(err)
	}
}

// The testing checker fails on a library file that imports testing or a
// testing/ package, also in a folder below a listed one, and on stale
// entries; it passes a helper's file and a folder not listed.
func TestNoTestingCheckerCatchesMistakes(t *testing.T) {
	files := map[string][]string{
		"lib/lib.go":            {"fmt", "testing"},
		"lib/sub/sub.go":        {"testing/quick"},
		"lib/clean.go":          {"fmt"},
		"lib/libtest/helper.go": {"testing"},
		"tool/tool.go":          {"testing"},
	}
	helpers := map[string]bool{"lib/libtest": true, "gone/gonetest": true}
	text := errors.Join(checkNoTesting(files, []string{"lib", "missing"}, helpers)...).Error()
	for _, w := range []string{
		`lib/lib.go imports "testing": a library the dosim command links carries no test code`,
		`lib/sub/sub.go imports "testing/quick"`,
		"libraryFolders lists missing, which holds no Go file any more",
		"testHelpers lists gone/gonetest, which is no package any more",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("the checker should report %q; it reported:\n%s", w, text)
		}
	}
	for _, w := range []string{"lib/clean.go", "lib/libtest", "tool/tool.go"} {
		if strings.Contains(text, w+" imports") || strings.Contains(text, w+"/helper.go") {
			t.Errorf("the checker should pass %s; it reported:\n%s", w, text)
		}
	}
	if len(checkNoTesting(map[string][]string{"lib/a.go": {"fmt"}, "lib/libtest/h.go": {"testing"}}, []string{"lib"}, map[string]bool{"lib/libtest": true})) != 0 {
		t.Errorf("a clean tree passes")
	}
}
