package cli

import (
	"testing"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// H1: --stall-limit sets the watchdog of every simulation a command runs;
// a negative value is a usage error naming the flag.
func TestH1_StallLimitFlag(t *testing.T) {
	inRoot(t)
	t.Cleanup(func() { runtime.SetDefaultStallLimit(runtime.DefaultStallLimit) })
	code, _, errOut := runCLI(t, "run", "--stall-limit", "-1s", "testdata/scenarios/deadline-during-retry.yaml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--stall-limit: -1s is negative")

	code, _, errOut = runCLI(t, "run", "--stall-limit", "3s", "testdata/scenarios/deadline-during-retry.yaml")
	require.Equal(t, exitOK, code, errOut)
	rt := runtime.New()
	defer rt.Close()
	assert.Equal(t, 3*time.Second, rt.StallLimit())
}

// H1: --stall-limit has a floor (runtime.MinStallLimit): a smaller limit
// made a seed fail or pass by the machine's load. It is a usage error
// naming the flag, the value and what is allowed; 0 still turns the
// watchdog off.
func TestH1_StallLimitFlagHasAFloor(t *testing.T) {
	inRoot(t)
	t.Cleanup(func() { runtime.SetDefaultStallLimit(runtime.DefaultStallLimit) })
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
