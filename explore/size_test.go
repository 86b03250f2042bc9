package explore_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// countSeeds is the size of a sweep whose claim is a count (10,000 seeds
// clean, a live heap flat over 50,000, a bug missed within 10,000): n,
// or a tenth of it under the race detector, which checks the code the
// sweep runs whatever its size. make test runs every test that calls it
// a second time without the detector (the Makefile's FULL_SIZE_TESTS), so
// the claim is checked at its size; TestFullSizeSweepsRunInMakeTest
// checks that the list names them all.
func countSeeds(n int) int {
	if raceOn {
		return max(n/10, 1)
	}
	return n
}

// sizedNames are the identifiers that make a test's size depend on the
// race detector.
var sizedNames = []string{"countSeeds", "missSeeds", "raceOn"}

// TestFullSizeSweepsRunInMakeTest: every test of this package whose
// sweep shrinks under the race detector (it names countSeeds, missSeeds
// or raceOn) is matched by the Makefile's FULL_SIZE_TESTS, the -run
// pattern of make test's second step, which runs them without it.
func TestFullSizeSweepsRunInMakeTest(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^FULL_SIZE_TESTS \?= (.+)$`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile sets FULL_SIZE_TESTS ?= <pattern>")
	pattern := strings.ReplaceAll(strings.Trim(string(m[1]), "'"), "$$", "$") // make's $$ is the shell's $
	full, err := regexp.Compile(pattern)
	require.NoError(t, err, "FULL_SIZE_TESTS")
	require.Contains(t, string(mk), "-run '$(FULL_SIZE_TESTS)|$(TOOL_TESTS)' ./explore", "make test's second step runs them")

	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	bodies := map[string]*ast.BlockStmt{} // the package's functions by name
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Body != nil && fn.Name.Name != t.Name() {
				bodies[fn.Name.Name] = fn.Body
			}
		}
	}
	// A function is sized when it names a sized identifier or a sized
	// function (fixedSeeds calls countSeeds): to a fixed point.
	names := slices.Clone(sizedNames)
	for grew := true; grew; {
		grew = false
		for name, body := range bodies {
			if !slices.Contains(names, name) && namesOneOf(body, names) {
				names, grew = append(names, name), true
			}
		}
	}
	var sized []string
	for _, name := range names {
		if _, ok := bodies[name]; ok && strings.HasPrefix(name, "Test") {
			sized = append(sized, name)
		}
	}
	slices.Sort(sized)
	sized = slices.Compact(sized)
	require.NotEmpty(t, sized, "the zoo's deep-bug tests at least")
	for _, name := range sized {
		if !full.MatchString(name) {
			t.Errorf("%s shrinks its sweep under -race (it names one of %v, or a function that does) but FULL_SIZE_TESTS (%s) does not run it without", name, sizedNames, pattern)
		}
	}
	t.Logf("run whole without -race: %v", sized)
}

// names2 says whether body names one of names.
func namesOneOf(body *ast.BlockStmt, names []string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && slices.Contains(names, id.Name) {
			found = true
		}
		return !found
	})
	return found
}
