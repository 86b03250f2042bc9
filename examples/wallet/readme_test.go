package wallet_test

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dosim/dosim/internal/buildflags"
)

// readme is the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// marked returns the fenced block that follows <!-- install: NAME --> in
// the README, without its fences.
func marked(t *testing.T, text, name string) string {
	t.Helper()
	_, after, ok := strings.Cut(text, "<!-- install: "+name+" -->\n```")
	if !ok {
		t.Fatalf("README.md: no block marked <!-- install: %s -->", name)
	}
	_, body, _ := strings.Cut(after, "\n") // the fence's language
	body, _, ok = strings.Cut(body, "```\n")
	if !ok {
		t.Fatalf("README.md: the block marked %s does not end", name)
	}
	return body
}

// The README's first test is this package's readme_first_test.go, but for
// its package clause: the test the README shows compiles and passes.
func TestReadmeFirstTestIsKept(t *testing.T) {
	block := marked(t, readme(t), "file first_test.go")
	kept, err := os.ReadFile("readme_first_test.go")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(block, "package myapp_test\n", "package wallet_test\n", 1)
	if string(kept) != want {
		t.Fatalf("readme_first_test.go is not the README's first test (marked <!-- install: file first_test.go -->); the README's:\n%s", block)
	}
	// Issue 33: writing and testing one class takes object, runtime,
	// transport and dosimtest, no more.
	f, err := parser.ParseFile(token.NewFileSet(), "first_test.go", block, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("the README's first test does not parse: %v", err)
	}
	var ours []string
	for _, im := range f.Imports {
		if path, _ := strconv.Unquote(im.Path.Value); strings.HasPrefix(path, "github.com/dosim/dosim/") {
			ours = append(ours, path)
		}
	}
	if len(ours) > 4 {
		t.Errorf("the README's first test imports %d dosim packages, %v; at most 4 (object, runtime, transport, dosimtest)", len(ours), ours)
	}
	_, run, _ := strings.Cut(block, "rt.Run(")
	run, _, _ = strings.Cut(run, "\n\t})\n")
	if strings.Contains(run, "t.Fatal") || strings.Contains(run, "t.Error") {
		t.Error("the README's first test calls t.Fatal or t.Error inside rt.Run")
	}
}

// The go:generate line docs/objects.md shows is wallet.go's, as a module of
// one's own spells it (go tool dosim-gen), flags and all: what the README
// tells users to write is what writes the checked-in stub.
func TestReadmeGenerateLineIsTheWallets(t *testing.T) {
	class, err := os.ReadFile("wallet.go")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^//go:generate go run github.com/dosim/dosim/cmd/dosim-gen (.*)$`).FindSubmatch(class)
	if line == nil {
		t.Fatal("wallet.go has no go:generate line that runs dosim-gen")
	}
	want := "//go:generate go tool dosim-gen " + string(line[1]) + "\n"
	objects, err := os.ReadFile("../../docs/objects.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(objects), "```go\n"+want+"```") {
		t.Errorf("docs/objects.md shows no block with the line %q", want)
	}
}

// fileBlocks are the README's <!-- install: file PATH --> blocks, by path.
var fileBlocks = regexp.MustCompile(`<!-- install: file (\S+) -->`)

// The README's install steps work: from a clone (here, this repository,
// reached as ../dosim), a module of one's own with a replace directive and
// the generator as its tool, the README's first test and a cli.Main
// command in it, and the wallet class with its go:generate line, which
// go tool dosim-gen turns into the same stub as the one checked in here.
func TestReadmeInstallSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own: skipped with -short")
	}
	text := readme(t)
	// The build cache keys a package by its directory: the scripts must
	// reach this clone by its own path, or they compile dosim's packages
	// a second time (3.5 s of this test's cold run). So root has no
	// symlinks, the shell's cd resolves the tmp/dosim link (cd -P), and
	// the module's replace is pointed at root once the README's ../dosim
	// is checked.
	root, err := filepath.Abs("../..")
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	tmp := t.TempDir()
	if err := os.Symlink(root, filepath.Join(tmp, "dosim")); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "bin")
	env := append(os.Environ(), "GOBIN="+bin, "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS="+buildflags.Flags(),
		"PATH="+filepath.Dir(goBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	sh(t, tmp, env, "cd() { command cd -P \"$@\"; }\n"+marked(t, text, "clone"))
	for _, cmd := range []string{"dosim", "dosim-gen"} {
		if _, err := os.Stat(filepath.Join(bin, cmd)); err != nil {
			t.Errorf("the clone's go install did not install %s: %v", cmd, err)
		}
	}

	module := append(env, "GOFLAGS=-mod=mod "+buildflags.Flags()) // the last GOFLAGS wins
	sh(t, tmp, module, marked(t, text, "module"))
	app := filepath.Join(tmp, "myapp")
	mod, err := os.ReadFile(filepath.Join(app, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "replace github.com/dosim/dosim => ../dosim\n") {
		t.Fatalf("the README's module steps wrote no replace of dosim by ../dosim:\n%s", mod)
	}
	sh(t, app, module, "go mod edit -replace github.com/dosim/dosim="+root)
	for _, m := range fileBlocks.FindAllStringSubmatch(text, -1) {
		write(t, filepath.Join(app, m[1]), marked(t, text, "file "+m[1]))
	}
	class, err := os.ReadFile("wallet.go")
	if err != nil {
		t.Fatal(err)
	}
	directive := []byte("//go:generate go run github.com/dosim/dosim/cmd/dosim-gen -type Wallet")
	if !bytes.Contains(class, directive) {
		t.Fatalf("wallet.go has no line %s", directive)
	}
	own := bytes.Replace(class, directive, []byte("//go:generate go tool dosim-gen -type Wallet"), 1) // as the README says
	write(t, filepath.Join(app, "mywallet", "wallet.go"), string(own))
	out := sh(t, app, module, marked(t, text, "build"))

	got, err := os.ReadFile(filepath.Join(app, "mywallet", "wallet_stub.go"))
	if err != nil {
		t.Fatalf("go generate wrote no stub: %v", err)
	}
	want, err := os.ReadFile("wallet_stub.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("go tool dosim-gen in the module wrote a stub other than wallet_stub.go:\n%s", got)
	}
	if !strings.Contains(out, "ok  \texample.com/myapp") {
		t.Errorf("go test ./... in the module did not pass the first test:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^mysim \S`).MatchString(out) { // not the "+ ./mysim version" of sh -x
		t.Errorf("./mysim version printed no \"mysim VERSION\" line:\n%s", out)
	}
}

// sh runs script with sh -e in dir and returns its output.
func sh(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-e", "-x", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in %s:\n%s\n%v; output:\n%s", dir, script, err, out)
	}
	return string(out)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
