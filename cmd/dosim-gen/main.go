// Command dosim-gen writes typed stubs of dosim classes, in the Go way of
// stringer and mockgen: put a go:generate line beside the class,
//
//	//go:generate go run github.com/dosim/dosim/cmd/dosim-gen -type Wallet
//
// (in a module of yours, after go mod edit -tool
// github.com/dosim/dosim/cmd/dosim-gen, the line is //go:generate go tool
// dosim-gen -type Wallet; see the README's install steps) and run go
// generate. For each type it reads the class's Methods() by static
// analysis and writes, beside it, a client with one method per entry and
// the entry's Go signature:
//
//	func (c WalletStub) Deposit(ctx context.Context, txID string, amount int) (int, error)
//
// with the entry's mark (Retryable or not) in the method's doc, and two
// constructors: NewWalletStub(s) calls through one *stub.Stub, and
// FreshWalletStub(ns, name, opts...) takes a fresh stub from the
// namespace for every call (rule L2: a failure breaks a stub). The
// string API (stub.Call) stays for scenarios and untyped use.
//
// Methods must be one return of one object.Methods literal whose entries
// are constant names and object.Func(fn) or object.Retryable(fn); other
// forms are refused with their position (package internal/stubgen says
// exactly what is understood).
//
// Usage:
//
//	dosim-gen -type T[,U...] [-output FILE] [DIR]
//
// DIR is the package's directory (default "."); FILE defaults to
// t_stub.go, after the first type, in DIR.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dosim/dosim/internal/stubgen"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run is the command: it returns the exit code, 0 when the file is
// written, 2 for a usage error and 1 for a class it cannot read.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("dosim-gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	typeList := fs.String("type", "", "comma-separated class `names` (required)")
	output := fs.String("output", "", "the `file` to write (default: the first type, lower-cased, + _stub.go, in DIR)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dosim-gen -type T[,U...] [-output FILE] [DIR]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *typeList == "" || fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	dir := "."
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	types := strings.Split(*typeList, ",")
	out := *output
	if out == "" {
		out = filepath.Join(dir, strings.ToLower(types[0])+"_stub.go")
	}
	if err := generate(dir, types, out, "dosim-gen -type "+*typeList); err != nil {
		fmt.Fprintln(stderr, "dosim-gen:", err)
		return 1
	}
	return 0
}

// generate writes the stubs of types in the package in dir to out.
func generate(dir string, types []string, out, cmdline string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("-output %s: %w", out, err)
	}
	pkg, err := stubgen.Load(dir, types, abs)
	if err != nil {
		return err
	}
	src, err := stubgen.Generate(pkg, cmdline)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", out, errors.Unwrap(err))
	}
	return nil
}
