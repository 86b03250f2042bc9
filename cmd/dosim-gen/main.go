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
// Names. By default a class T gets TStub, NewTStub and FreshTStub: the
// names for a package of many classes, as dosim's examples package is
// (examples.NewBoothStub(s).Hold(ctx, key, seat, holder)). In a package
// that holds one class, -name Stub gives Stub, NewStub and FreshStub, so
// that callers read the package's name once:
//
//	//go:generate go run github.com/dosim/dosim/cmd/dosim-gen -type Wallet -name Stub
//
//	n, err := wallet.NewStub(s).Deposit(ctx, "tx-1", 50)
//
// -name takes one -type; any exported identifier will do.
//
// Types. Every parameter after ctx and the result must be a type the
// generated file can name in the class's package (not a type another
// package leaves unexported) and one that can cross a call: dosim copies
// arguments and results as plain data, so a func, a channel or an unsafe
// pointer in them, outside a stub or an RPC target, is refused, naming
// the entry, the parameter and its type.
//
// Methods must be one return of one object.Methods literal whose entries
// are constant names and object.Func(fn) or object.Retryable(fn); other
// forms are refused with their position (package internal/stubgen says
// exactly what is understood).
//
// Usage:
//
//	dosim-gen -type T[,U...] [-name N] [-output FILE] [DIR]
//
// DIR is the package's directory (default "."); FILE defaults to
// t_stub.go, after the first type, in DIR.
package main

import (
	"errors"
	"flag"
	"fmt"
	"go/token"
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
	name := fs.String("name", "", "the client type's `name`, with one -type: -name Stub writes Stub, NewStub and FreshStub (default: T+Stub, NewTStub, FreshTStub)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dosim-gen -type T[,U...] [-name N] [-output FILE] [DIR]")
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
	if err := checkName(*name, types); err != nil {
		fmt.Fprintln(stderr, "dosim-gen:", err)
		return 2
	}
	cmdline := "dosim-gen -type " + *typeList
	if *name != "" {
		cmdline += " -name " + *name
	}
	out := *output
	if out == "" {
		out = filepath.Join(dir, strings.ToLower(types[0])+"_stub.go")
	}
	if err := generate(dir, types, *name, out, cmdline); err != nil {
		fmt.Fprintln(stderr, "dosim-gen:", err)
		return 1
	}
	return 0
}

// checkName checks -name: an exported Go identifier, given with one type.
func checkName(name string, types []string) error {
	switch {
	case name == "":
		return nil
	case !token.IsIdentifier(name) || !token.IsExported(name):
		return fmt.Errorf("-name %q: want an exported Go identifier, such as Stub", name)
	case len(types) != 1:
		return fmt.Errorf("-name %s names one class's stub, but -type lists %d (%s): drop -name, or run dosim-gen once per type", name, len(types), strings.Join(types, ","))
	}
	return nil
}

// generate writes the stubs of types in the package in dir to out; name,
// if not "", is the one type's client type.
func generate(dir string, types []string, name, out, cmdline string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("-output %s: %w", out, err)
	}
	pkg, err := stubgen.Load(dir, types, abs)
	if err != nil {
		return err
	}
	if name != "" {
		pkg.Classes[0].Stub = name
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
