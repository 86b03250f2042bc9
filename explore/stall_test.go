package explore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// H1: Options.StallLimit is the watchdog's limit of every run a sweep
// makes, of a Go function as of a scenario (cli's --stall-limit reaches
// both through it): a function blocked outside the simulation fails its
// seed within the limit, not the 10 s default.
func TestH1_OptionsStallLimitReachesEveryRun(t *testing.T) {
	release := make(chan struct{})
	defer close(release) // the stalled function returns, and its goroutine ends
	start := time.Now()
	sum, err := explore.RunFunc(explore.Options{Seeds: 1, NoShrink: true, StallLimit: 100 * time.Millisecond},
		func(context.Context, *runtime.Runtime) error { <-release; return nil })
	require.NoError(t, err)
	assert.Less(t, time.Since(start), runtime.DefaultStallLimit)
	require.NotEmpty(t, sum.Violations)
	assert.True(t, strings.Contains(sum.Violations[0].Message, "ran for more than 100ms"), sum.Violations[0].Message)
}
