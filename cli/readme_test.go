package cli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples/wallet"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeBlock is one shell session quoted in the README: the command after
// "$ " and the output lines printed under it.
type readmeBlock struct {
	file string
	line int
	cmd  string
	want []string
}

// readmeBlocks finds the fenced blocks of README.md whose first line is
// "$ dosim ...", "$ walletsim ..." (the wallet project's command, run from
// its folder) or "$ make run".
func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var (
		blocks []readmeBlock
		cur    *readmeBlock
		fence  bool
		n      int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if fence && cur != nil {
				blocks = append(blocks, *cur)
			}
			fence, cur = !fence, nil
			continue
		}
		if !fence {
			continue
		}
		if cur == nil {
			if c, ok := strings.CutPrefix(line, "$ "); ok && (strings.HasPrefix(c, "dosim ") || strings.HasPrefix(c, "walletsim ") || c == "make run") {
				cur = &readmeBlock{file: filepath.Base(path), line: n, cmd: c}
			} else {
				// Not a session: skip the rest of this fence.
				for sc.Scan() {
					n++
					if strings.HasPrefix(sc.Text(), "```") {
						fence = false
						break
					}
				}
			}
			continue
		}
		cur.want = append(cur.want, line)
	}
	require.NoError(t, sc.Err())
	return blocks
}

// docFiles are the documents whose blocks are checked: the README,
// DEVELOPMENT.md and every docs/*.md, relative to the repository.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	out := []string{"README.md", "DEVELOPMENT.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(repoRoot, d)
		require.NoError(t, err)
		out = append(out, rel)
	}
	return out
}

// Every "$ dosim ..." session in the README and docs/ prints what it says
// it prints (H2: the documentation is checked like a tool). A line "..." in a
// quoted output stands for lines left out: what comes before it must start
// the real output and what comes after it must end it.
func TestH2_ReadmeSessionsAreTrue(t *testing.T) {
	inRoot(t)
	var blocks []readmeBlock
	for _, doc := range docFiles(t) {
		blocks = append(blocks, readmeBlocks(t, filepath.Join(repoRoot, doc))...)
	}
	require.NotEmpty(t, blocks, "the README and docs/ quote dosim sessions")
	for _, b := range blocks {
		t.Run(b.cmd, func(t *testing.T) {
			want := b.want
			args := strings.Fields(strings.TrimPrefix(b.cmd, "dosim "))
			if b.cmd == "make run" {
				// make run echoes the go run line, then runs the demo scenario.
				require.NotEmpty(t, want)
				require.True(t, strings.HasPrefix(want[0], "go run -tags dosim_nosql ./cmd/dosim "), "%s line %d", b.file, b.line)
				args = strings.Fields(strings.TrimPrefix(want[0], "go run -tags dosim_nosql ./cmd/dosim "))
				want = want[1:]
			}
			var out string
			if name, rest, _ := strings.Cut(b.cmd, " "); name == "walletsim" {
				t.Chdir(filepath.Join(repoRoot, "examples", "wallet"))
				var o, e bytes.Buffer
				Main(strings.Fields(rest), WithName("walletsim"), WithOutput(&o, &e),
					WithClasses(map[string]runtime.Constructor{"wallet": wallet.New}))
				out = o.String()
			} else {
				_, out, _ = runCLI(t, args...)
			}
			got := strings.Split(strings.TrimRight(out, "\n"), "\n")
			for i := range got {
				got[i] = strings.TrimRight(got[i], " ")
			}
			head, tail, elided := want, []string(nil), false
			for i, l := range want {
				if strings.TrimSpace(l) == "..." {
					head, tail, elided = want[:i], want[i+1:], true
					break
				}
			}
			if !elided {
				assert.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "%s line %d: %s", b.file, b.line, b.cmd)
				return
			}
			require.GreaterOrEqual(t, len(got), len(head)+len(tail), "%s line %d: output shorter than quoted", b.file, b.line)
			assert.Equal(t, strings.Join(head, "\n"), strings.Join(got[:len(head)], "\n"), "%s line %d: start of %s", b.file, b.line, b.cmd)
			assert.Equal(t, strings.Join(tail, "\n"), strings.Join(got[len(got)-len(tail):], "\n"), "%s line %d: end of %s", b.file, b.line, b.cmd)
		})
	}
}

// The README's first test keeps to the README's own "do | do not": it
// fails the test after rt.Run, never with t.Fatal inside the function
// Run runs (that would end the simulation's task, not the test).
func TestReadmeFirstTestFailsOutsideRun(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	start := strings.Index(string(readme), "```go\n")
	require.Positive(t, start, "the README shows a first test")
	first := firstFunc(string(readme[start:]), "func Test")
	require.NotEmpty(t, first)
	run := strings.Index(first, "rt.Run(")
	require.Positive(t, run, "the first test calls rt.Run: %s", first)
	end := strings.Index(first[run:], "\n\t})")
	require.Positive(t, end, "rt.Run's function ends: %s", first)
	assert.NotContains(t, first[run:run+end], "t.Fatal", "the README's first test fails the test inside rt.Run")
	assert.NotContains(t, first[run:run+end], "t.FailNow", "the README's first test fails the test inside rt.Run")
}

// firstFunc is the Go function in text that starts with head, through
// the closing brace at the start of a line.
func firstFunc(text, head string) string {
	i := strings.Index(text, head)
	if i < 0 {
		return ""
	}
	j := strings.Index(text[i:], "\n}\n")
	if j < 0 {
		return ""
	}
	return text[i : i+j+2]
}
