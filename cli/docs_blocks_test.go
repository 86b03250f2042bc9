package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docBlock is one fenced block of a document: its language, its text and
// the HTML comment just above it, if any.
type docBlock struct {
	file, lang, text, mark string
	line                   int
}

// docBlocks reads the fenced blocks of the document at path.
func docBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var (
		out   []docBlock
		cur   *docBlock
		prev  string
		lines = strings.Split(string(data), "\n")
	)
	for i, l := range lines {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			mark := ""
			if strings.HasPrefix(prev, "<!--") {
				mark = prev
			}
			cur = &docBlock{file: filepath.Base(path), lang: strings.TrimPrefix(l, "```"), mark: mark, line: i + 1}
		case cur != nil && strings.HasPrefix(l, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
		if strings.TrimSpace(l) != "" {
			prev = l
		}
	}
	return out
}

// squash is text without its indentation and blank lines, for comparing a
// snippet with the file that keeps it.
func squash(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// checkedBy names, in a block's mark, the test that checks it:
// <!-- checked by TestName -->.
var checkedBy = regexp.MustCompile(`^<!-- checked by (\w+) -->$`)

// H2: every code block of the README, DEVELOPMENT.md and docs/ is checked
// by a test: a dosim session is run (TestH2_ReadmeSessionsAreTrue), the
// install steps are run (examples/wallet's TestReadmeInstallSteps), a Go
// block is kept word for word in a Go file of the repository, which
// compiles, a YAML block in a shipped scenario, and any other block names
// the test that checks it in the comment above it.
func TestDocsCodeBlocksAreChecked(t *testing.T) {
	var sources []string // every Go and YAML file of the repository, squashed
	tests := map[string]bool{}
	testName := regexp.MustCompile(`(?m)^func ((?:Test|Example|Fuzz|Benchmark)\w*)\(`)
	require.NoError(t, filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return err
		}
		if ext := filepath.Ext(p); ext == ".go" || ext == ".yaml" {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sources = append(sources, squash(string(data)))
			for _, m := range testName.FindAllStringSubmatch(string(data), -1) {
				tests[m[1]] = true
			}
		}
		return nil
	}))
	kept := func(text string) bool {
		want := squash(text)
		for _, s := range sources {
			if strings.Contains(s, want) {
				return true
			}
		}
		return false
	}
	checked := 0
	for _, doc := range docFiles(t) {
		for _, b := range docBlocks(t, filepath.Join(repoRoot, doc)) {
			where := doc + ":" + itoa(b.line)
			first, _, _ := strings.Cut(b.text, "\n")
			switch {
			case strings.HasPrefix(first, "$ dosim ") || strings.HasPrefix(first, "$ walletsim ") || first == "$ make run":
			case strings.HasPrefix(b.mark, "<!-- install: ") || b.mark == "<!-- leaky-wallet-failure -->":
			case checkedBy.MatchString(b.mark):
				name := checkedBy.FindStringSubmatch(b.mark)[1]
				assert.True(t, tests[name], "%s: the block names %s, which no test file declares", where, name)
			case (b.lang == "go" || b.lang == "yaml") && kept(b.text):
			case b.lang == "yaml":
				if err := parsesAsScenario(b.text); err != nil {
					t.Errorf("%s: a YAML block that is no scenario, nor part of one: %v\n%s", where, err, b.text)
					continue
				}
			default:
				t.Errorf("%s: a %q block no test checks: keep it word for word in a Go or YAML file of the repository, or name its test above it (<!-- checked by TestName -->):\n%s", where, b.lang, b.text)
				continue
			}
			checked++
		}
	}
	assert.Greater(t, checked, 40, "the docs' blocks were read")
}

// docsBase is a scenario a YAML fragment of the docs is read into: its
// stubs are those the fragments name.
const docsBase = `name: docs
namespaces: {INVENTORY: inventory}
stubs:
  shop: {namespace: INVENTORY, object: shop}
  apple: {namespace: INVENTORY, object: apple}
  pear: {namespace: INVENTORY, object: pear}
calls:
  - {stub: shop, method: Get, args: [apple]}
`

// parsesAsScenario reads text as a scenario of its own, else as a step of
// docsBase's calls or a top-level block of it; the error is the parser's.
func parsesAsScenario(text string) error {
	classes := scenario.WithBuiltInClasses(examples.Constructors())
	if _, err := scenario.Parse("doc.yaml", []byte(text), classes); err == nil {
		return nil
	}
	_, err := scenario.Parse("doc.yaml", []byte(docsBase+text), classes)
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }
