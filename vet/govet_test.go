package vet_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dosim/dosim/internal/buildflags"
)

// repoRoot walks up from the working directory to dosim's go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
	buildOut  []byte
)

// dosimvet builds cmd/dosimvet once into a temporary folder and returns
// the binary's path; it skips the test where there is no go command.
func dosimvet(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH: cannot run go vet -vettool")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dosimvet")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "dosimvet")
		cmd := exec.Command("go", "build", "-o", built, "./cmd/dosimvet")
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(), "GOFLAGS=") // a tool built with -race runs many times slower
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/dosimvet: %v\n%s", buildErr, buildOut)
	}
	return built
}

// goVet runs go vet -vettool=dosimvet with args in dir and returns its
// output and whether it passed.
func goVet(t *testing.T, dir string, env []string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"vet", "-vettool=" + dosimvet(t)}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if _, failed := err.(*exec.ExitError); err != nil && !failed {
		t.Fatalf("go vet: %v", err)
	}
	return string(out), err == nil
}

const userGoMod = `module example.com/user

go 1.26

require github.com/dosim/dosim v0.0.0

replace github.com/dosim/dosim => %s
`

const userBad = `package bad

import (
	"context"
	"time"

	"github.com/dosim/dosim/object"
)

type Clock struct{ st *object.State }

func New(st *object.State) object.Object { return &Clock{st: st} }

func (c *Clock) Methods() object.Methods {
	return object.Methods{"Stamp": object.Func(c.Stamp)}
}

func (c *Clock) Stamp(ctx context.Context) (string, error) {
	return time.Now().String(), nil
}
`

// userHelper and userCalls: object code calling a helper package of the
// same module, reported at the call through the helper's fact.
const userHelper = `package helper

import "time"

func Wait() { time.Sleep(time.Millisecond) }
`

const userCalls = `package calls

import (
	"context"

	"example.com/user/helper"
	"github.com/dosim/dosim/object"
)

type Waiter struct{}

func (w *Waiter) Methods() object.Methods {
	return object.Methods{"Wait": object.Func(w.Wait)}
}

func (w *Waiter) Wait(ctx context.Context) error {
	helper.Wait()
	return nil
}
`

const userClean = `package clean

import (
	"context"

	"github.com/dosim/dosim/object"
)

type Clock struct{ st *object.State }

func New(st *object.State) object.Object { return &Clock{st: st} }

func (c *Clock) Methods() object.Methods {
	return object.Methods{"Stamp": object.Func(c.Stamp)}
}

func (c *Clock) Stamp(ctx context.Context) (string, error) {
	return c.st.Now().String(), nil
}
`

// go vet -vettool=dosimvet works on a user's module that requires dosim
// (replaced by this clone): a time.Now in a method is reported with its
// replacement, a time.Sleep in a helper package of the module at the
// method's call of it (a fact crossing go vet's per-package runs), and a
// clean class, or the helper on its own (not object code), gives none.
func TestGoVetOnAUserModule(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":         strings.Replace(userGoMod, "%s", root, 1),
		"go.sum":         string(sum),
		"bad/bad.go":     userBad,
		"clean/clean.go": userClean,
		"helper/h.go":    userHelper,
		"calls/calls.go": userCalls,
	}
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// -objectcode.tests=false, as TestPlantedBugsInTheExamples passes it
	// (the module has no tests): go vet keys the facts it computes for the
	// standard library and dosim by the tool's flags, and reuses them.
	env := []string{"GOFLAGS=-mod=mod " + buildflags.Flags(), "GOWORK=off", "GOPROXY=off"}
	out, ok := goVet(t, dir, env, "-objectcode.tests=false", "./bad")
	if ok || !strings.Contains(out, "bad.go:19:14: time.Now in object code (reached from Clock.Stamp (a Methods entry)): use st.Now()") {
		t.Errorf("go vet ./bad passed=%v, want a failure naming time.Now and st.Now():\n%s", ok, out)
	}
	out, ok = goVet(t, dir, env, "-objectcode.tests=false", "./calls")
	if ok || !strings.Contains(out, "calls.go:17:9: helper.Wait, which reaches time.Sleep (h.go:5 in Wait), in object code (reached from Waiter.Wait (a Methods entry)): use st.Sleep") {
		t.Errorf("go vet ./calls passed=%v, want the helper's time.Sleep reported at the call:\n%s", ok, out)
	}
	out, ok = goVet(t, dir, env, "-objectcode.tests=false", "./clean", "./helper")
	if !ok || strings.TrimSpace(out) != "" {
		t.Errorf("go vet ./clean passed=%v, want a silent pass:\n%s", ok, out)
	}
}

// The examples' planted bugs that an analyzer can see are reported once
// their //dosimvet:ok comments are ignored (-objectcode.ok=false); with
// them, what make lint runs over the examples is clean.
func TestPlantedBugsInTheExamples(t *testing.T) {
	root := repoRoot(t)
	out, ok := goVet(t, root, nil, "-objectcode.tests=false", "-objectcode.ok=false", "./examples/...")
	for _, want := range []string{
		"examples/mailer.go:48:12: Retryable Mailer.Send records an effect (st.Effect) before it looks up any key made from its arguments",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("go vet -objectcode.ok=false ./examples/...: no %q in:\n%s", want, out)
		}
	}
	if ok || strings.Count("\n"+out, "\nexamples/") != 1 {
		t.Errorf("want exactly the planted report(s), got passed=%v:\n%s", ok, out)
	}
	out, ok = goVet(t, root, nil, "-objectcode.tests=false", "./examples/...")
	if !ok || strings.TrimSpace(out) != "" {
		t.Errorf("go vet -objectcode.tests=false ./examples/... passed=%v, want clean:\n%s", ok, out)
	}
}
