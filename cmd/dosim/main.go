// Command dosim runs Durable-Object-style actor scenarios in a deterministic
// simulator: dosim run FILE... runs scenario files (docs/scenarios.md) and
// shows a timeline, JSON, a Mermaid diagram or an HTML page; dosim amplify
// shows how retries multiply with an application's own loop; dosim demo
// runs the built-in inventory demo.
//
// Exit codes: 0 ok; 1 an expectation failed, explore found a violation or
// verify found a marked method that is not idempotent; 2 a usage or input
// error, or output that could not be written; 3 the simulation itself
// failed; 130 (143) explore stopped by SIGINT (SIGTERM) after printing what
// ran.
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

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run runs the command line and returns the exit code. Every command
// writes its output through a checkedWriter: a write that failed (a full
// disk, a closed pipe) makes the command fail with exit code 2, whatever it
// found, since its report never reached the reader.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run with a context that a test can cancel, as a signal
// would.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	cmd := newRoot(out, stderr)
	cmd.SetArgs(args)
	code := exitCode(cmd.ExecuteContext(ctx), stderr)
	if out.err != nil && code != exitInternal {
		fmt.Fprintf(stderr, "dosim: writing the output: %v\n", out.err)
		return exitUsage
	}
	return code
}

// exitCode reports err on stderr and returns the exit code it stands for.
func exitCode(err error, stderr io.Writer) int {
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

// checkedWriter keeps the first error of the writer it wraps; once a write
// has failed, every later write fails with the same error without trying.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

// codeError carries an exit code out of a command.
type codeError struct {
	code int
	msg  string
}

func (e *codeError) Error() string { return e.msg }
