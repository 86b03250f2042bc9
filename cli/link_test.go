package cli

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/internal/buildflags"
)

// userMain is a program of a user's: cli.Main on a class of its own,
// without WithBuiltInClasses.
const userMain = `package main

import (
	"os"

	"github.com/dosim/dosim/cli"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

type counter struct{ st *object.State }

func (c *counter) Methods() object.Methods { return nil }

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.WithClasses(map[string]runtime.Constructor{
		"counter": func(st *object.State) object.Object { return &counter{st} },
	})))
}
`

// Rule U2: a program built on cli.Main without WithBuiltInClasses links none of
// dosim's example classes (issue 33): no constructor, no method, no
// demo. What is left of package examples is its initialisation (the
// sample maps its classes' VerifySamples return), for cli imports it for
// WithBuiltInClasses. cmd/dosim, which passes it, links them all.
func TestU2_AUserBinaryLinksNoExampleClass(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir, goCmd := buildflags.UserModule(t, root, map[string][]byte{"main.go": []byte(userMain)})
	bin := filepath.Join(dir, "user")
	goCmd("build", "-o", bin, ".")
	var linked []string
	sc := bufio.NewScanner(bytes.NewReader(goCmd("tool", "nm", bin)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[1] != "T" {
			continue // data, not code
		}
		name := strings.Join(f[2:], " ")
		if strings.HasPrefix(name, "github.com/dosim/dosim/examples.") && name != "github.com/dosim/dosim/examples.init" {
			linked = append(linked, name)
		}
	}
	if len(linked) > 0 {
		t.Errorf("a user's binary links %d functions of package examples, such as %s", len(linked), strings.Join(linked[:min(5, len(linked))], ", "))
	}

	// The check can fail: dosim's own command links the classes.
	goCmd("build", "-o", bin, "github.com/dosim/dosim/cmd/dosim")
	if out := goCmd("tool", "nm", bin); !bytes.Contains(out, []byte(" T github.com/dosim/dosim/examples.NewInventory")) {
		t.Error("cmd/dosim does not link examples.NewInventory: the check above proves nothing")
	}
}
