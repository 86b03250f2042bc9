package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// H2: the command blocks of the docs name what exists: each make target is
// the Makefile's, each package a go command names is a folder of the
// repository, each -bench or -run pattern matches a benchmark or test of
// that package, and each file a dosim command reads is there (the blocks
// marked <!-- checked by TestDocsCommandsNameWhatExists -->).
func TestDocsCommandsNameWhatExists(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	require.NoError(t, err)
	checked := 0
	for _, doc := range docFiles(t) {
		for _, b := range docBlocks(t, filepath.Join(repoRoot, doc)) {
			if b.mark != "<!-- checked by TestDocsCommandsNameWhatExists -->" {
				continue
			}
			for i, line := range strings.Split(strings.TrimRight(b.text, "\n"), "\n") {
				where := doc + ":" + itoa(b.line+1+i)
				cmd, _, _ := strings.Cut(line, " #")
				if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(cmd) == "" {
					continue
				}
				checkCommand(t, where, strings.Fields(cmd), string(makefile))
				checked++
			}
		}
	}
	assert.Greater(t, checked, 15, "the docs' commands were read")
}

// checkCommand checks one command line's words.
func checkCommand(t *testing.T, where string, words []string, makefile string) {
	t.Helper()
	for len(words) > 0 && strings.Contains(words[0], "=") { // VAR=value prefixes
		words = words[1:]
	}
	switch {
	case len(words) >= 2 && words[0] == "make":
		assert.Regexp(t, "(?m)^"+regexp.QuoteMeta(words[1])+":", makefile, "%s: make %s is no target of the Makefile", where, words[1])
	case len(words) >= 2 && words[0] == "go":
		checkGoCommand(t, where, words[1:])
	case len(words) >= 1 && (words[0] == "dosim" || words[0] == "dosimvet"):
		checkPaths(t, where, words[1:])
	case len(words) >= 1 && strings.HasPrefix(words[0], "scripts/"):
		st, err := os.Stat(filepath.Join(repoRoot, words[0]))
		if assert.NoError(t, err, "%s: %s is not in the repository", where, words[0]) {
			assert.NotZero(t, st.Mode()&0o111, "%s: %s is not executable", where, words[0])
		}
	default:
		t.Errorf("%s: a command the check does not know: %s", where, strings.Join(words, " "))
	}
}

// checkGoCommand checks a go command's packages, files and patterns.
func checkGoCommand(t *testing.T, where string, args []string) {
	t.Helper()
	var pkg string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "./"):
			p := strings.TrimSuffix(a, "/...")
			if strings.HasPrefix(args[0], "run") && strings.HasSuffix(a, ".go") {
				p = filepath.Dir(p)
			}
			_, err := os.Stat(filepath.Join(repoRoot, p))
			assert.NoError(t, err, "%s: %s is not in the repository", where, a)
			pkg = p
			if args[0] == "run" {
				checkPaths(t, where, args[i+1:])
				return
			}
		case strings.HasPrefix(a, "github.com/dosim/dosim/"):
			_, err := os.Stat(filepath.Join(repoRoot, strings.TrimSuffix(strings.TrimPrefix(a, "github.com/dosim/dosim/"), "@latest")))
			assert.NoError(t, err, "%s: %s is not in the repository", where, a)
		case (a == "-bench" || a == "-run") && i+1 < len(args):
			i++
			checkPattern(t, where, pkg, a, strings.Trim(args[i], "'"))
		}
	}
}

// checkPattern checks that each alternative of a -bench or -run pattern
// names a function of pkg.
func checkPattern(t *testing.T, where, pkg, flag, pattern string) {
	t.Helper()
	if pattern == "^$" || pkg == "" || pkg == "." {
		return
	}
	prefix := "Test"
	if flag == "-bench" {
		prefix = "Benchmark"
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, pkg, "*_test.go"))
	require.NoError(t, err)
	var src strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(data)
	}
	for _, alt := range strings.Split(pattern, "|") {
		name := strings.Trim(alt, "^$")
		if name == "" {
			continue
		}
		if !strings.HasPrefix(name, prefix) && !strings.HasPrefix(name, "Fuzz") && !strings.HasPrefix(name, "Example") {
			name = prefix + name
		}
		assert.Regexp(t, `(?m)^func `+regexp.QuoteMeta(name), src.String(), "%s: %s %s names no function of ./%s", where, flag, alt, pkg)
	}
}

// checkPaths checks that each argument that names a file of the
// repository (a path with a slash, or a glob) is there.
func checkPaths(t *testing.T, where string, args []string) {
	t.Helper()
	for _, a := range args {
		if strings.HasPrefix(a, "-") || strings.HasPrefix(a, ">") || !strings.Contains(a, "/") || strings.HasPrefix(a, "$(") || strings.Contains(a, "=") {
			continue
		}
		matches, err := filepath.Glob(filepath.Join(repoRoot, a))
		require.NoError(t, err)
		assert.NotEmpty(t, matches, "%s: %s is not in the repository", where, a)
	}
}
