package runtimetest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/runtime/runtimetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// sendOne runs one call on a runtime made by New for ft.
func sendOne(t *testing.T, ft *fakeT) {
	rt := runtimetest.New(ft, runtime.WithSeed(3))
	ns := rt.Namespace("MAILER", func(st *object.State) object.Object { return &mailer{st: st} })
	runtimetest.Run(t, rt, func(ctx context.Context) error {
		s, err := ns.GetByName("m")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Status")
		return err
	})
}

// New logs deliveries at DEBUG only when asked (-dosim.debug or
// DOSIM_DEBUG): by default go test -v shows the test's own lines.
func TestNewLogsAtDebugOnlyWhenAsked(t *testing.T) {
	t.Setenv("DOSIM_DEBUG", "")
	assert.Equal(t, zap.InfoLevel, runtimetest.LogLevel())
	quiet := &fakeT{TB: t}
	sendOne(t, quiet)
	assert.NotContains(t, strings.Join(quiet.logs, "\n"), "delivered")

	t.Setenv("DOSIM_DEBUG", "1")
	assert.Equal(t, zap.DebugLevel, runtimetest.LogLevel())
	loud := &fakeT{TB: t}
	sendOne(t, loud)
	assert.Contains(t, strings.Join(loud.logs, "\n"), "DEBUG\tdelivered")
}

// Run names the seed once and the error after it, without a second
// "dosim: " prefix.
func TestRunPrefixesTheErrorOnce(t *testing.T) {
	rt := runtimetest.New(t, runtime.WithSeed(5))
	ft := &fakeT{TB: t}
	runtimetest.Run(ft, rt, func(ctx context.Context) error { panic("boom") })
	require.Len(t, ft.errors, 1)
	assert.True(t, strings.HasPrefix(ft.errors[0], `dosim: seed 5: task "root" panicked: boom`), ft.errors[0])
	assert.Equal(t, 1, strings.Count(ft.errors[0], "dosim: "), ft.errors[0])
}

// A goroutine that outlives the runtime fails the test with the seed and
// the replay line, as any other failure does.
func TestGoroutineLeakPrintsTheSeedAndReplay(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	stop := make(chan struct{})
	ft := &fakeT{TB: t}
	t.Cleanup(func() { // runs after New's cleanup (cleanups run last first)
		close(stop)
		require.NotEmpty(t, ft.errors)
		assert.Contains(t, ft.errors[0], "goroutines outlived the runtime")
		logs := strings.Join(ft.logs, "\n")
		assert.Contains(t, logs, "dosim: seed 4; replay with: go test ")
		assert.Contains(t, logs, "-dosim.seed=4")
	})
	runtimetest.New(ft, runtime.WithSeed(4))
	go func() { <-stop }()
}
