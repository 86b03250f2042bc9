// Package cli is dosim's command line as a library: Main runs the
// commands run, explore, verify and amplify (and version, and demo when
// dosim's own classes are registered) on the classes a program registers,
// so that a program of yours gets the whole command line on your classes
// with a main of a few lines:
//
//	package main
//
//	import (
//		"os"
//
//		"example.com/wallet"
//		"github.com/dosim/dosim/cli"
//		"github.com/dosim/dosim/runtime"
//	)
//
//	func main() {
//		os.Exit(cli.Main(os.Args[1:], cli.WithName("walletsim"),
//			cli.WithClasses(map[string]runtime.Constructor{"wallet": wallet.New})))
//	}
//
// walletsim run FILE then runs scenario files whose namespaces name
// "wallet"; walletsim verify wallet checks its marked methods; walletsim
// explore FILE searches its fault space. dosim's own command (cmd/dosim)
// is Main with WithBuiltInClasses.
//
// Configuration: Main takes functional options (WithClasses, WithName,
// WithOutput...), as runtime.New does. Inside, each command keeps its
// flags in an options struct with validate and run methods; the cobra
// command only binds the flags to it (command.go).
//
// Exit codes: 0 ok; 1 an expectation failed, explore found a violation,
// verify found a marked method that is not idempotent, or the code under
// test stopped a run or an amplify trial (a stall, runtime.Goexit); 2 a
// usage or input error, or output that could not be written; 3 the
// simulation itself failed; 130 (143) explore stopped by SIGINT (SIGTERM)
// after printing what ran.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
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

// Option configures Main: the classes its commands know, the program's
// name, where it writes.
type Option interface{ apply(*app) }

type optionFunc func(*app)

func (f optionFunc) apply(a *app) { f(a) }

// WithClasses registers classes the commands work on: a constructor per
// class name, the name being how scenario files and verify spell the
// class ("wallet": wallet.New). It may be given several times; a later
// option replaces a class of the same name. Without WithBuiltInClasses,
// dosim's own example classes are not registered: the commands know only
// yours. The map is copied.
//
// verify tries each method with the arguments a class gives by
// implementing object.Sampler, else with --args.
func WithClasses(classes map[string]runtime.Constructor) Option {
	classes = maps.Clone(classes)
	return optionFunc(func(a *app) {
		a.regs = append(a.regs, scenario.WithClasses(classes))
		maps.Copy(a.classes, classes)
		for name := range classes {
			delete(a.builtIns, name)
		}
	})
}

// WithBuiltInClasses registers dosim's own example classes (package
// examples: booth, booth-leaky, bucket, chat, chores, counter, inventory, ledger, mailer, outbox,
// seats, seats-leaky, session, tally; examples.ClassNames lists them), and with
// them the demo command and amplify's default class (inventory). It is
// what cmd/dosim passes; give it beside WithClasses to have both.
func WithBuiltInClasses() Option {
	return optionFunc(func(a *app) {
		ctors := examples.Constructors()
		a.demo = &demoProgram{class: examples.NewInventory, faults: examples.DemoFaults, run: examples.Demo}
		a.regs = append(a.regs, scenario.WithBuiltInClasses(ctors))
		maps.Copy(a.classes, ctors)
		for name := range ctors {
			a.builtIns[name] = true
		}
	})
}

// WithName sets the program's name, as usage, help, messages and the
// replay commands explore prints spell it (default "dosim").
func WithName(name string) Option {
	return optionFunc(func(a *app) {
		if name != "" {
			a.name = name
		}
	})
}

// WithOutput sets where the commands write: their output to stdout,
// progress and messages to stderr (default os.Stdout and os.Stderr).
func WithOutput(stdout, stderr io.Writer) Option {
	return optionFunc(func(a *app) { a.stdout, a.stderr = stdout, stderr })
}

// WithContext sets the context the commands run under (default
// context.Background()): cancelling it stops an explore sweep as SIGINT
// does, with the summary of what ran and exit code 130.
func WithContext(ctx context.Context) Option {
	return optionFunc(func(a *app) { a.ctx = ctx })
}

// app is one run of the command line: what the options set.
type app struct {
	name           string
	stdout, stderr io.Writer
	ctx            context.Context
	regs           []scenario.Option              // for scenario.Load, in the order given
	classes        map[string]runtime.Constructor // every registered class
	builtIns       map[string]bool                // the classes WithBuiltInClasses registered (and none replaced)
	demo           *demoProgram                   // dosim demo's program; nil without WithBuiltInClasses
	// stall is --stall-limit (0: the watchdog off), passed to every
	// simulation a command runs: runtime.WithStallLimit, scenario.StallLimit
	// and, through stallOption, the options structs of explore, verify and
	// amplify.
	stall time.Duration
}

// stallOption is --stall-limit as the options structs of explore, verify
// and amplify take it: their 0 is the default limit, a negative value
// turns the watchdog off.
func (a *app) stallOption() time.Duration {
	if a.stall == 0 {
		return -1
	}
	return a.stall
}

// Main runs the command line args (os.Args[1:]) and returns the exit code:
// 0 ok; 1 an expectation failed (run), a violation was found (explore), a
// marked method is not idempotent (verify), or the code under test stopped
// a run or an amplify trial (a stall, runtime.Goexit); 2 a usage or input
// error, or output that could not be written; 3 the simulation itself
// failed; 130 (143) explore interrupted by SIGINT (SIGTERM). While it
// runs, Go's collector runs at GOGC=400 unless GOGC is set (a sweep spends
// less on collecting, for more memory: collectorBudget). Every command
// writes its output through a checked writer: a write that failed (a full
// disk, a pipe whose reader went away: Main turns SIGPIPE off while it
// runs) makes the command fail with exit code 2, whatever it found, since
// its report never reached the reader.
func Main(args []string, opts ...Option) int {
	a := &app{name: "dosim", stdout: os.Stdout, stderr: os.Stderr, ctx: context.Background(),
		classes: map[string]runtime.Constructor{}, builtIns: map[string]bool{}}
	for _, o := range opts {
		if o != nil {
			o.apply(a)
		}
	}
	if a.ctx == nil {
		a.ctx = context.Background()
	}
	out := &checkedWriter{w: a.stdout}
	defer writeToClosedPipes()()
	defer budgetCollector()()
	cmd := a.newRoot(out, a.stderr)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(a.ctx)
	if out.err != nil && errors.Is(err, out.err) {
		err = nil // said once, below
	}
	code := a.exitCode(err)
	if out.err != nil && code != exitInternal {
		fmt.Fprintf(a.stderr, "%s: writing the output: %v\n", a.name, out.err)
		return exitUsage
	}
	return code
}

// writeToClosedPipes makes a write to a closed pipe fail with EPIPE, until
// the function it returns is called, instead of killing the process with
// SIGPIPE (which Go does for standard output and error by default): the
// checked writer then ends the command with exit code 2 and a message
// (dosim run -f json big.yaml | head -c 10 died of SIGPIPE, exit 141).
func writeToClosedPipes() (restore func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	return func() { signal.Stop(ch) }
}

// classNames lists the registered class names, sorted.
func (a *app) classNames() []string { return slices.Sorted(maps.Keys(a.classes)) }

// hasBuiltIns reports whether dosim's own classes are registered.
func (a *app) hasBuiltIns() bool { return len(a.builtIns) > 0 }

// loadScenario loads a scenario file whose namespaces may name the
// registered classes: run, explore and verify --scenario all load through
// it.
func (a *app) loadScenario(path string) (*scenario.Scenario, error) {
	return scenario.Load(path, a.regs...)
}

// exitCode reports err on stderr and returns the exit code it stands for.
func (a *app) exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ce *codeError
	if errors.As(err, &ce) {
		if ce.msg != "" {
			if ce.named {
				fmt.Fprintf(a.stderr, "%s: %s\n", a.name, escapeLines(prefixOnce(ce.msg)))
			} else {
				fmt.Fprintln(a.stderr, escapeLines(ce.msg))
			}
		}
		return ce.code
	}
	fmt.Fprintf(a.stderr, "%s: %s\n", a.name, escapeLines(prefixOnce(err.Error())))
	return exitUsage
}

// maxMessageLine bounds each line of a message Main prints: dosim's own
// messages quote input through package quote, but a flag parser's or a
// JSON decoder's quote it whole (invalid argument "500 KB..." for --seeds).
const maxMessageLine = 4096

// escapeLines escapes each line of a message (render.Escape), keeping its
// line breaks, and bounds it (maxMessageLine): whatever a message quotes
// from a file, a flag or an object's error, it cannot move the cursor,
// recolour the terminal or fill the screen.
func escapeLines(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = quote.CutTo(render.Escape(l), maxMessageLine)
	}
	return strings.Join(lines, "\n")
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

// codeError carries an exit code out of a command. A named message is
// printed after the program's name ("dosim: ..."); another as it is (a
// FILE:LINE: message).
type codeError struct {
	code  int
	msg   string
	named bool
	err   error // the error it reports, if any (Unwrap)
}

func (e *codeError) Error() string { return e.msg }

// Unwrap returns the error the message reports, for errors.Is and As.
func (e *codeError) Unwrap() error { return e.err }

// simulationError is a run that failed: exit code 1 when the code under
// test stopped it (a task blocked outside the simulation past the stall
// limit, one that called runtime.Goexit, or work that waits past the end
// of virtual time or sets itself up again at the same instant for ever,
// rule H1), as explore reports it as a violation: the objects' code
// misbehaved, not dosim; else a failure of the simulation itself, exit
// code 3.
func simulationError(err error) error {
	var stall *runtime.StallError
	var p *runtime.PanicError
	var clock *runtime.ClockError
	if errors.As(err, &stall) || errors.As(err, &p) && p.Goexit || errors.As(err, &clock) {
		return &codeError{code: exitExpect, named: true, err: err,
			msg: "the code under test stopped the simulation (not a bug in dosim): " + unprefixed(err)}
	}
	return internalError("", err)
}

// internalError is a failure of the simulation itself: exit code 3.
func internalError(prefix string, err error) error {
	return &codeError{code: exitInternal, msg: prefix + unprefixed(err), named: true, err: err}
}

// unprefixed is err's message without the runtime's leading "dosim: ":
// the message is printed after the program's name, so that every prefix
// appears once.
func unprefixed(err error) string { return prefixOnce(err.Error()) }

// prefixOnce drops the runtime's "dosim: " from the start of msg and from
// after each ": " inside it (an error wrapped in another, as scenario's
// and amplify's ErrRun wrap the runtime's): Main prints the program's name
// before the message, and a reader sees each prefix once.
func prefixOnce(msg string) string {
	return strings.ReplaceAll(strings.TrimPrefix(msg, "dosim: "), ": dosim: ", ": ")
}
