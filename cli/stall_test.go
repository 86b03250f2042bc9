package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dosim/dosim/object"

	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// H1: --stall-limit sets the watchdog of every simulation a command runs
// (run, explore, verify, amplify: each passes it down to
// runtime.WithStallLimit), and of nothing else: no process-wide default
// changes. A negative value is a usage error naming the flag.
func TestH1_StallLimitFlag(t *testing.T) {
	inRoot(t)
	code, _, errOut := runCLI(t, "run", "--stall-limit", "-1s", "testdata/scenarios/deadline-during-retry.yaml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--stall-limit: -1s is negative")

	release := make(chan struct{})
	defer close(release) // the stalled methods return, and their goroutines end
	classes := WithClasses(map[string]runtime.Constructor{
		"stopper": func(*object.State) object.Object { return &stopper{release: release} },
		"staller": func(*object.State) object.Object { return staller{release} },
	})
	f := filepath.Join(t.TempDir(), "stall.yaml")
	require.NoError(t, os.WriteFile(f, []byte("namespaces: {S: stopper}\nstubs: {s: {}}\ncalls:\n  - {stub: s, method: Stall}\n"), 0o644))
	const stalled = `" ran for more than 100ms of wall-clock time` // attempt 1, or a retry
	for _, args := range [][]string{
		{"run", f},
		{"explore", "--seeds", "1", "--no-shrink", f},
		{"verify", "staller"},
		{"amplify", "--outer", "1", "--class", "stopper", "--method", "Stall", "--fault", "lose-response", "--rate", "0.1", "--trials", "1"},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{args[0], "--stall-limit", "100ms"}, args[1:]...), classes, WithOutput(&out, &errb))
		assert.NotEqual(t, exitOK, code, args)
		assert.Contains(t, out.String()+errb.String(), stalled, args)
	}
	rt := runtime.New()
	defer rt.Close()
	assert.Equal(t, runtime.DefaultStallLimit, rt.StallLimit(), "no process-wide default changed")
}

// H1: --stall-limit has a floor (runtime.MinStallLimit): a smaller limit
// made a seed fail or pass by the machine's load. It is a usage error
// naming the flag, the value and what is allowed; 0 still turns the
// watchdog off.
func TestH1_StallLimitFlagHasAFloor(t *testing.T) {
	inRoot(t)
	for _, v := range []string{"1ns", "99ms"} {
		code, _, errOut := runCLI(t, "run", "--stall-limit", v, "testdata/scenarios/deadline-during-retry.yaml")
		assert.Equal(t, exitUsage, code, v)
		assert.Contains(t, errOut, "--stall-limit: "+v+" is below the watchdog's floor of 100ms")
		assert.Contains(t, errOut, "0 to turn the watchdog off")
	}
	for _, v := range []string{"0", "100ms"} {
		code, _, errOut := runCLI(t, "run", "--stall-limit", v, "testdata/scenarios/deadline-during-retry.yaml")
		require.Equal(t, exitOK, code, errOut)
	}
}

// staller is a class whose one method blocks outside the simulation until
// the test releases it.
type staller struct{ release chan struct{} }

func (s staller) Methods() object.Methods {
	return object.Methods{"Stall": object.Func(func(context.Context) error { <-s.release; return nil })}
}
