package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failingWriter accepts limit bytes, then fails every write, as a full
// disk or a closed pipe does.
type failingWriter struct {
	limit int
	n     int
}

var errDiskFull = errors.New("no space left on device")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		k := max(0, w.limit-w.n)
		w.n += k
		return k, errDiskFull
	}
	w.n += len(p)
	return len(p), nil
}

// Rule H2: a command whose output could not be written has not told the
// reader anything; it must not exit 0 (dosim amplify > /dev/full did).
func TestH2_FailedWriteExits2(t *testing.T) {
	inRoot(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"version"},
		{"amplify", "--outer", "3"},
		{"demo"},
		{"demo", "--format", "json"},
		{"run", "testdata/scenarios/overloaded.yaml"},
		{"run", "--format", "html", "testdata/scenarios/overloaded.yaml"},
		{"run", "--format", "jsonl", "testdata/scenarios/overloaded.yaml"}, // exit 3, "a bug"
		{"verify", "counter"},
		{"explore", "testdata/scenarios/overloaded.yaml", "--seeds", "3"},
		{"explore", "testdata/scenarios/overloaded.yaml", "--seeds", "3", "--json", "-"},
		{"explore", "merge", filepath.Join(dir, "sum.json")},
		{"run", "testdata/cli/failing-expectation.yaml"}, // exit 1 without the failure
	} {
		if args[0] == "explore" && args[1] == "merge" {
			code, _, errOut := runCLI(t, "explore", "testdata/scenarios/overloaded.yaml", "--seeds", "3", "--json", filepath.Join(dir, "sum.json"))
			require.Equal(t, exitOK, code, errOut)
		}
		for _, limit := range []int{0, 5} {
			var errb bytes.Buffer
			code := run(args, &failingWriter{limit: limit}, &errb)
			assert.Equal(t, exitUsage, code, "%v with %d bytes written", args, limit)
			assert.Contains(t, errb.String(), "dosim: writing the output: no space left on device", args)
		}
	}
}

func TestH2_CheckedWriterKeepsFirstError(t *testing.T) {
	w := &checkedWriter{w: &failingWriter{limit: 4}}
	n, err := w.Write([]byte("abc"))
	assert.Equal(t, 3, n)
	require.NoError(t, err)
	_, err = w.Write([]byte("def"))
	assert.ErrorIs(t, err, errDiskFull)
	_, err = w.Write([]byte("g"))
	assert.ErrorIs(t, err, errDiskFull, "later writes fail too")
	assert.ErrorIs(t, w.err, errDiskFull)
}

// trackedFiles lists the repository's tracked files, from git when it is
// there, else every file under the root but .git.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z").Output()
		if err == nil {
			var files []string
			for _, f := range strings.Split(string(out), "\x00") {
				if f != "" {
					files = append(files, f)
				}
			}
			return files
		}
	}
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(repoRoot, path)
			files = append(files, rel)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// executableKind names the executable format whose magic number b starts
// with, or returns "".
func executableKind(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		return "ELF"
	case bytes.HasPrefix(b, []byte{0xfe, 0xed, 0xfa, 0xce}), bytes.HasPrefix(b, []byte{0xfe, 0xed, 0xfa, 0xcf}),
		bytes.HasPrefix(b, []byte{0xce, 0xfa, 0xed, 0xfe}), bytes.HasPrefix(b, []byte{0xcf, 0xfa, 0xed, 0xfe}),
		bytes.HasPrefix(b, []byte{0xca, 0xfe, 0xba, 0xbe}):
		return "Mach-O"
	case bytes.HasPrefix(b, []byte("MZ")):
		return "PE"
	}
	return ""
}

// No binary is committed: cmd/dosim/dosim, an 8.4 MB stale build, was.
func TestH2_NoExecutableTracked(t *testing.T) {
	files := trackedFiles(t)
	require.NotEmpty(t, files)
	for _, f := range files {
		fh, err := os.Open(filepath.Join(repoRoot, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		require.NoError(t, err)
		head := make([]byte, 4)
		n, _ := fh.Read(head)
		fh.Close()
		assert.Empty(t, executableKind(head[:n]), "%s is an executable: remove it with git rm and build into an ignored path", f)
	}
}

func TestH2_ExecutableKind(t *testing.T) {
	assert.Equal(t, "ELF", executableKind([]byte("\x7fELF\x02")))
	assert.Equal(t, "Mach-O", executableKind([]byte{0xcf, 0xfa, 0xed, 0xfe}))
	assert.Equal(t, "PE", executableKind([]byte("MZ\x90\x00")))
	assert.Empty(t, executableKind([]byte("package main")))
}

// No tracked file is also ignored (testdata/demo.golden was reported to
// be); built binaries are ignored.
func TestH2_GitignoreAgreesWithTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "--cached", "--ignored", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	assert.Empty(t, strings.TrimSpace(string(out)), "tracked files that .gitignore ignores")
	for _, built := range []string{"dosim", "cmd/dosim/dosim"} {
		err := exec.Command("git", "-C", repoRoot, "check-ignore", "-q", "--no-index", built).Run()
		assert.NoError(t, err, "%s (a go build output) should be ignored", built)
	}
	for _, written := range writtenByTheDocs(t) {
		err := exec.Command("git", "-C", repoRoot, "check-ignore", "-q", "--no-index", written).Run()
		assert.NoError(t, err, "%s (written by a command in the README or docs/) should be ignored", written)
	}
	for _, kept := range []string{"testdata/demo.golden", "testdata/scenarios/overloaded.golden"} {
		err := exec.Command("git", "-C", repoRoot, "check-ignore", "-q", "--no-index", kept).Run()
		assert.Error(t, err, "%s must not be ignored", kept)
	}
}

// dosim version says what the go command stamped, not "dev".
func TestH2_VersionFromBuildInfo(t *testing.T) {
	info := func(v string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/dosim/dosim", Version: v}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, c := range []struct {
		ldflags string
		info    *debug.BuildInfo
		ok      bool
		want    string
	}{
		{"", nil, false, "dev"},
		{"", info("(devel)"), true, "dev"},
		{"", info("v1.2.3"), true, "v1.2.3"},
		{"", info("(devel)", "vcs.revision", "a2b055d0123456789abcdef", "vcs.modified", "false"), true, "dev (commit a2b055d01234)"},
		{"", info("v0.0.0-20261130095648-a2b055d01234+dirty", "vcs.revision", "a2b055d0123456789abcdef", "vcs.modified", "true"), true,
			"v0.0.0-20261130095648-a2b055d01234+dirty (commit a2b055d01234, modified)"},
		{"v9.9.9", info("v1.2.3"), true, "v9.9.9"},
	} {
		assert.Equal(t, c.want, versionText(c.ldflags, c.info, c.ok))
	}
}

// Rule H2: explore and verify say what their exit code 1 means, not the
// generic "an expectation failed".
func TestH2_ExitCodeOneSaysWhatItMeans(t *testing.T) {
	for cmd, one := range map[string]string{
		"explore": "1  a violation was found",
		"verify":  "1  a method marked Retryable is not idempotent",
	} {
		_, out, _ := runCLI(t, cmd, "--help")
		assert.Contains(t, out, one, cmd)
		assert.NotContains(t, out, "an expectation failed", cmd)
	}
}

// Rule H2: an --args that names nothing being verified is an error, not
// silently ignored.
func TestH2_VerifyRefusesArgsItWouldIgnore(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--args", "Nope=[1]"},
			`dosim: --args Nope: no class verified has a method "Nope"; verified are booth (Confirm, Hold, Holder, Pay); booth-leaky (Confirm, Hold, Holder, Pay); bucket (Size); chat (Members); chores (Arm, Deliver, Grow, Kick, KickOnce, Poison, Sprout, Sweep, Swept, Tend, Watch, WatchForever); counter (Get, Increment, Reset); inventory (AddOne, Get, SetQuantity);`},
		{[]string{"verify", "counter", "--args", `mailer.Send=["a@b.c", "hi"]`},
			"dosim: --args mailer.Send: class mailer is not being verified (verified are counter); name it: dosim verify mailer\n"},
		{[]string{"verify", "mailer", "--args", `mailer.Sned=[]`},
			`dosim: --args mailer.Sned: class mailer has no method "Sned"; it has Send, Sent` + "\n"},
		{[]string{"verify", "mailer", "--args", `teapot.Send=[]`},
			`dosim: --args teapot.Send: unknown class "teapot"; the built-in classes are booth, booth-leaky, bucket, chat, chores, counter, inventory, ledger, mailer, outbox, seats, seats-leaky, session, tally` + "\n"},
		{[]string{"verify", "counter", "--args", `Send=["a@b.c", "hi"]`},
			`dosim: --args Send: no class verified has a method "Send"; verified are counter (Get, Increment, Reset)` + "\n"},
	} {
		code, out, errOut := runCLI(t, c.args...)
		assert.Equal(t, exitUsage, code, c.args)
		assert.Empty(t, out, c.args)
		if strings.HasSuffix(c.want, "\n") {
			assert.Equal(t, c.want, errOut, c.args)
		} else {
			assert.Contains(t, errOut, c.want, c.args)
		}
	}
	code, _, errOut := runCLI(t, "verify", "mailer", "--args", `Send=["a@b.c", "hi"]`, "--args", `mailer.Sent=[]`)
	assert.Equal(t, exitExpect, code, errOut)
}

// verify mailer mailer printed every row twice.
func TestH2_VerifyNamesEachClassOnce(t *testing.T) {
	_, once, _ := runCLI(t, "verify", "mailer")
	code, twice, _ := runCLI(t, "verify", "mailer", "mailer")
	assert.Equal(t, exitExpect, code)
	assert.Equal(t, once, twice)
	assert.Equal(t, 1, strings.Count(twice, "mailer  Send"))
}

// verify --scenario F checks the classes the scenario uses, not every one.
func TestH2_VerifyScenarioChecksItsClasses(t *testing.T) {
	inRoot(t)
	code, out, errOut := runCLI(t, "verify", "--scenario", "testdata/scenarios/mailer-vs-ledger.yaml")
	assert.Equal(t, exitExpect, code, errOut)
	var classes []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if line == "" {
			break
		}
		if f := strings.Fields(line); len(classes) == 0 || classes[len(classes)-1] != f[0] {
			classes = append(classes, f[0])
		}
	}
	assert.Equal(t, []string{"mailer", "ledger"}, classes)
	// Named classes still win over the scenario's.
	code, out, _ = runCLI(t, "verify", "counter", "--scenario", "testdata/scenarios/mailer-vs-ledger.yaml")
	assert.Equal(t, exitOK, code)
	assert.NotContains(t, out, "mailer")
}

// docs/scenarios.md's classes table lists every built-in class (outbox
// was missing).
func TestH2_DocsListEveryClass(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "scenarios.md"))
	require.NoError(t, err)
	for _, c := range examples.ClassNames() {
		assert.Contains(t, string(doc), "\n| `"+c+"` |", "docs/scenarios.md: add class %s to the classes table", c)
	}
}

// Rule H2: a YAML description, a storage key and an argument with terminal
// escapes are printed escaped, in every place dosim run shows them.
func TestH2_RunEscapesScenarioText(t *testing.T) {
	f := filepath.Join(t.TempDir(), "evil.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`description: "clear \e[2J the screen"
namespaces: {INVENTORY: inventory}
stubs: {shop: {}}
calls:
  - {stub: shop, method: SetQuantity, args: ["\e]0;title\a", 3]}
  - stub: shop
    method: Get
    args: ["\e]0;title\a"]
    expect: {result: "\e[31m"}
`), 0o644))
	code, out, errOut := runCLI(t, "run", f)
	assert.Equal(t, exitExpect, code, errOut)
	assert.NotContains(t, out+errOut, "\x1b")
	assert.NotContains(t, out+errOut, "\x07")
	assert.Contains(t, out, `clear \u001b[2J the screen`)
	assert.Contains(t, out, `\u001b]0;title\u0007 = 3`)
	code, _, errOut = runCLI(t, "run", "--format", "mermaid", f)
	assert.Equal(t, exitExpect, code)
	assert.NotContains(t, errOut, "\x1b")
	assert.Contains(t, errOut, `expected "\u001b[31m"`)
}

// run --format json has one shape: an array, even for one file (it was an
// object for one file and an array for several).
func TestH2_RunJSONIsAlwaysAnArray(t *testing.T) {
	inRoot(t)
	for _, files := range [][]string{
		{"testdata/scenarios/overloaded.yaml"},
		{"testdata/scenarios/overloaded.yaml", "testdata/scenarios/not-delivered.yaml"},
	} {
		code, out, errOut := runCLI(t, append([]string{"run", "--format", "json"}, files...)...)
		require.Equal(t, exitOK, code, errOut)
		var reports []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &reports), "an array for %d file(s)", len(files))
		assert.Len(t, reports, len(files))
	}
}

// explore merge names rates as --rates takes them, not as a Go map
// ("map[lose-response:0.1]").
func TestH2_MergeMessageWritesRatesAsFlags(t *testing.T) {
	inRoot(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, c := range []struct{ file, rates, shard string }{{a, "lose-response=0.1", "0/2"}, {b, "lose-request=0.2", "1/2"}} {
		code, _, errOut := runCLI(t, "explore", "testdata/scenarios/overloaded.yaml", "--seeds", "4", "--rates", c.rates, "--shard", c.shard, "--json", c.file)
		require.Equal(t, exitOK, code, errOut)
	}
	code, _, errOut := runCLI(t, "explore", "merge", a, b)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "rates lose-request=0.2, not lose-response=0.1")
	assert.NotContains(t, errOut, "map[")
}

// Rule H2: explore and explore merge print the scenario's name: and its
// path escaped, as run does (explore x^[]0;pwned^G^[[2Jred set the
// terminal's title and cleared the screen), and every message any command
// prints is escaped the same way.
func TestH2_ExploreAndMergeEscapeScenarioText(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../testdata/scenarios/overloaded.yaml")
	require.NoError(t, err)
	f := filepath.Join(dir, "evil\x1b[2J.yaml")
	require.NoError(t, os.WriteFile(f, bytes.Replace(src, []byte("name: overloaded"), []byte(`name: "x\e]0;pwned\a\e[2Jred"`), 1), 0o644))
	js := filepath.Join(dir, "s.json")
	code, out, errOut := runCLI(t, "explore", f, "--seeds", "3", "--json", js)
	require.Equal(t, exitOK, code, errOut)
	code, merged, errMerge := runCLI(t, "explore", "merge", js)
	require.Equal(t, exitOK, code, errMerge)
	code, _, errBad := runCLI(t, "explore", "merge", f) // a message quoting the file
	assert.Equal(t, exitUsage, code)
	for _, text := range []string{out, errOut, merged, errMerge, errBad} {
		assert.NotContains(t, text, "\x1b")
		assert.NotContains(t, text, "\x07")
	}
	want := `explore x\u001b]0;pwned\u0007\u001b[2Jred (` + dir + `/evil\u001b[2J.yaml)`
	assert.Contains(t, out, want)
	assert.Contains(t, merged, want)
	assert.Contains(t, errBad, `evil\u001b[2J.yaml`)
}

// redirect is a command's output sent to a file: "... > timeline.html".
var redirect = regexp.MustCompile(`(?m)^(?:go run \./cmd/dosim|dosim) [^\n>]*[^0-9&]> ?([\w./-]+)`)

// writtenByTheDocs is every file a dosim command in README.md or docs/
// writes into the folder it runs in.
func writtenByTheDocs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	var out []string
	for _, f := range append(files, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range redirect.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
	}
	require.NotEmpty(t, out, "the README writes timeline.html")
	return out
}
