package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runFile(t *testing.T, name string, edit func(string) string) *scenario.Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", name))
	require.NoError(t, err)
	s, err := scenario.Parse(name, []byte(edit(string(data))), builtIns)
	require.NoError(t, err)
	res, err := s.Run()
	require.NoError(t, err)
	return res
}

// L5: the shipped eviction-cache scenario passes with the fixed read
// (Hits reloads from storage), and its planted-bug form (HitsCached trusts
// the field cache) fails its expectation after the 200 s pause.
func TestL5_EvictionCacheScenarioFixedPassesBuggyFails(t *testing.T) {
	fixed := runFile(t, "eviction-cache.yaml", func(s string) string { return s })
	assert.True(t, fixed.Passed(), "%v", fixed.Failures)
	assert.Contains(t, fixed.Trace(), "SESSIONS/ada evicted idle=")

	buggy := runFile(t, "eviction-cache.yaml", func(s string) string {
		return strings.Replace(s, "method: Hits, at: 200s", "method: HitsCached, at: 200s", 1)
	})
	assert.False(t, buggy.Passed(), "the cached read is wrong after the eviction")
}

// L3: the reset fault with a reason, from YAML: the running transfer fails
// with the platform's message and is not retried; storage survives.
func TestL3_ResetDuringTransferScenario(t *testing.T) {
	res := runFile(t, "reset-during-transfer.yaml", func(s string) string { return s })
	assert.True(t, res.Passed(), "%v", res.Failures)
	assert.Contains(t, res.Trace(), `BANK/main reset reason=code-update message="Durable Object reset because its code was updated."`)

	for _, bad := range []struct{ from, to, want string }{
		{"reason: code-update}", "reason: deploy}", `unknown reset reason "deploy"; allowed are code-update, storage, memory-limit`},
		{"fault: reset, reason", "fault: lose-response, reason", "a reason goes only with fault: reset"},
	} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", "reset-during-transfer.yaml"))
		require.NoError(t, err)
		_, err = scenario.Parse("r.yaml", []byte(strings.Replace(string(data), bad.from, bad.to, 1)), builtIns)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "faults.rules[0].reason")
		assert.Contains(t, err.Error(), bad.want)
	}
}
