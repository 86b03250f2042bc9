// Command dosim runs Durable-Object-style actor scenarios in a deterministic
// simulator: dosim run FILE... runs scenario files (docs/scenarios.md) and
// shows a timeline, JSON, a Mermaid diagram or an HTML page; dosim amplify
// shows how retries multiply with an application's own loop; dosim demo
// runs the built-in inventory demo.
//
// Exit codes: 0 ok, 1 an expectation failed, 2 a usage or input error, 3 the
// simulation itself failed.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK       = 0
	exitExpect   = 1
	exitUsage    = 2
	exitInternal = 3
	// exitInterrupted is 128+SIGINT, as a shell reports a command that
	// SIGINT ended: explore returns it (143 for SIGTERM) after printing
	// what ran.
	exitInterrupted = 130
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run runs the command line and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run with a context that a test can cancel, as a signal
// would.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := newRoot(stdout, stderr)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ce *codeError
	if errors.As(err, &ce) {
		if ce.msg != "" {
			fmt.Fprintln(stderr, ce.msg)
		}
		return ce.code
	}
	fmt.Fprintln(stderr, "dosim:", err)
	return exitUsage
}

// codeError carries an exit code out of a command.
type codeError struct {
	code int
	msg  string
}

func (e *codeError) Error() string { return e.msg }
