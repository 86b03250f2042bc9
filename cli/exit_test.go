package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exitOf runs cmd and returns its exit code and standard error; a
// process killed by a signal reads as 128 plus the signal, as a shell
// says.
func exitOf(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stderr.String()
	}
	require.NoError(t, err, stderr.String())
	return 0, stderr.String()
}

// Rule H2, through a real process: output that could not be written is
// exit code 2 with a message: to a full disk (/dev/full: run -f jsonl and
// explore --json exited 3, "a bug"), and to a pipe its reader closed
// (dosim run -f json ... | head -c 10 died of SIGPIPE, 141).
func TestH2_FailedWritesExit2ThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds dosim")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a watchdog, not a measure
	defer cancel()
	bin := buildDosim(ctx, t)
	if full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err == nil {
		for _, args := range [][]string{
			{"run", "-f", "jsonl", ambiguous},
			{"run", "-f", "json", ambiguous},
			{"explore", ambiguous, "--seeds", "3"},
		} {
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Stdout = full
			code, errOut := exitOf(t, cmd)
			assert.Equal(t, exitUsage, code, "%v: %s", args, errOut)
			assert.Contains(t, errOut, "dosim: writing the output: write /dev/stdout: no space left on device", args)
		}
		full.Close()
		code, errOut := exitOf(t, exec.CommandContext(ctx, bin, "explore", ambiguous, "--seeds", "3", "--json", "/dev/full"))
		assert.Equal(t, exitUsage, code, errOut)
		assert.Contains(t, errOut, "dosim: --json /dev/full: write /dev/full: no space left on device")
	}

	// Many reports, so that the output outgrows the pipe's buffer.
	args := []string{"run", "-f", "json"}
	for range 200 { // about 700 KB, ten times a pipe's buffer
		args = append(args, ambiguous)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	head := make([]byte, 10)
	_, err = io.ReadFull(out, head)
	require.NoError(t, err)
	require.NoError(t, out.Close())
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, stderr.String())
	assert.Equal(t, exitUsage, exit.ExitCode(), "not killed by SIGPIPE: %s", stderr.String())
	assert.Contains(t, stderr.String(), "dosim: writing the output: ")
	assert.Contains(t, stderr.String(), "broken pipe")
}

// stopper is a user's class whose methods stop the simulation: Stall
// blocks outside it until the test releases it, Quit calls
// runtime.Goexit (as t.FailNow from simulated code does).
type stopper struct {
	release chan struct{}
	st      *object.State
}

func (s *stopper) Methods() object.Methods {
	return object.Methods{
		"Stall": object.Func(func(ctx context.Context) error { <-s.release; return nil }),
		"Quit":  object.Func(func(ctx context.Context) error { goruntime.Goexit(); return nil }),
		"Lie":   object.Func(func(ctx context.Context) error { return brokenErr{} }),
		"Nap": object.Func(func(ctx context.Context) error {
			return s.st.Sleep(ctx, time.Duration(math.MaxInt64)) // past the end of virtual time
		}),
	}
}

// brokenErr is an error whose Error method panics.
type brokenErr struct{}

func (brokenErr) Error() string { panic("boom") }

// Rule S4: an object error whose Error method panics is the object's,
// shown as its error naming the method; it was blamed on the caller
// (task "root" panicked, exit 3).
func TestS4_RunShowsAnObjectErrorWhoseErrorPanics(t *testing.T) {
	f := filepath.Join(t.TempDir(), "lie.yaml")
	require.NoError(t, os.WriteFile(f, []byte("namespaces: {S: stopper}\nstubs: {s: {}}\ncalls:\n  - {stub: s, method: Lie, expect: {outcome: not-retryable}}\n"), 0o644))
	var out, errb bytes.Buffer
	code := Main([]string{"run", f}, WithClasses(map[string]runtime.Constructor{"stopper": func(*object.State) object.Object { return &stopper{} }}), WithOutput(&out, &errb))
	assert.Equal(t, exitOK, code, errb.String())
	assert.Contains(t, out.String(), "S/s.Lie returned an error (cli.brokenErr) whose Error method panicked: boom")
}

// Rule H1: a run or an amplify trial that the code under test stopped (a
// stall outside the simulation, runtime.Goexit, a sleep past the end of
// virtual time) is the code's failure:
// exit code 1, as explore's violation, naming the task and what to do, not
// exit 3 ("the simulation itself failed: a bug, please report it").
func TestH1_RunAndAmplifyBlameTheCodeUnderTest(t *testing.T) {
	release := make(chan struct{})
	defer close(release) // the stalled method returns, and its goroutine ends
	classes := WithClasses(map[string]runtime.Constructor{"stopper": func(st *object.State) object.Object { return &stopper{release: release, st: st} }})
	dir := t.TempDir()
	for method, want := range map[string]string{
		"Stall": `.Stall attempt 1" ran for more than 100ms of wall-clock time`,
		"Quit":  `.Quit attempt 1" called runtime.Goexit`,
		// issue 36: it exited 3 ("a bug in dosim, please report it")
		"Nap": "waits for an instant past the end of virtual time",
	} {
		f := filepath.Join(dir, method+".yaml")
		require.NoError(t, os.WriteFile(f, []byte("namespaces: {S: stopper}\nstubs: {s: {}}\ncalls:\n  - {stub: s, method: "+method+"}\n"), 0o644))
		for _, args := range [][]string{
			{"run", "--stall-limit", "100ms", f},
			{"amplify", "--stall-limit", "100ms", "--outer", "1", "--class", "stopper", "--method", method, "--fault", "lose-response", "--rate", "0.1", "--trials", "2"},
		} {
			var out, errb bytes.Buffer
			code := Main(args, classes, WithOutput(&out, &errb))
			assert.Equal(t, exitExpect, code, "%v: %s", args, errb.String())
			assert.Contains(t, errb.String(), "dosim: the code under test stopped the simulation (not a bug in dosim): ", args)
			assert.Contains(t, errb.String(), want, args)
			assert.Equal(t, 1, strings.Count(errb.String(), "dosim: "), "every prefix once: %s", errb.String())
		}
	}
}
