package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExhaustive_ExploreCertifies: explore --exhaustive prints what it
// placed and its certificate, exits 0 on a clean tree, and writes the
// certificate to --json, which merge refuses.
func TestExhaustive_ExploreCertifies(t *testing.T) {
	js := filepath.Join(t.TempDir(), "sum.json")
	code, out, errOut := runCLI(t, "explore", ambiguous, "--exhaustive", "--max-faults", "2", "--json", js)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "exhaustive: up to 2 fault(s) of not-delivered, lose-request, lose-while-running, lose-response, overloaded, fail-after-delivery, reset, storage-write-fails at every decision point, seed 1, latency p50=2ms,p99=100ms\n")
	assert.Regexp(t, `\nevery placement of up to 2 faults over \d+ decision points was run: \d+ runs, clean \(sha256 [0-9a-f]{16}\)\n`, out)
	assert.NotContains(t, out, "seeds run", "an exhaustive search counts runs")
	data, err := os.ReadFile(js)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"exhaustive": {`)

	code, _, errOut = runCLI(t, "explore", "merge", js)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "is an exhaustive search")

	_, again, _ := runCLI(t, "explore", ambiguous, "--exhaustive", "--max-faults", "2", "--workers", "2")
	assert.Equal(t, out, again, "the same report, the same hash, on two workers")
}

// TestExhaustive_ExploreFailureReplays: a planted bug is found, shrunk,
// printed with a replay line that replays its fault set, and written to
// --artifacts with its faults.yaml.
func TestExhaustive_ExploreFailureReplays(t *testing.T) {
	file := "../testdata/scenarios/booth-leaky.yaml"
	arts := t.TempDir()
	code, out, errOut := runCLI(t, "explore", file, "--exhaustive", "--max-faults", "2", "--artifacts", arts)
	require.Equal(t, exitExpect, code, errOut)
	assert.Contains(t, out, "\nfirst failing placement, after ")
	assert.Contains(t, out, "the shrunk replay (seed 1 with 1 fault only) violates:\n")
	m := regexp.MustCompile(`replay: dosim explore \S+ --replay 1 --replay-faults (\S+) --latency (\S+) --strategy random\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	yaml, err := os.ReadFile(filepath.Join(arts, "faults.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(yaml), "fault: ")

	code, replay, _ := runCLI(t, "explore", file, "--replay", "1", "--replay-faults", m[1], "--latency", m[2], "--strategy", "random")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, replay, "seed 1 with the faults --replay-faults gave only (1) violates:")
	code, clean, _ := runCLI(t, "explore", file, "--replay", "1", "--replay-faults", "none", "--latency", m[2], "--strategy", "random")
	assert.Equal(t, exitOK, code, "no fault: no violation")
	assert.Contains(t, clean, "seed 1 with the faults --replay-faults gave only (0): no violation")
}

// TestExhaustive_ExploreBadFlags: each bad value or flag that does not go
// with --exhaustive or --replay-faults is a usage error naming it.
func TestExhaustive_ExploreBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--exhaustive", "--max-faults", "5"}, "--max-faults 5: want 1 to 4 faults per placement"},
		{[]string{"--exhaustive", "--max-faults", "0"}, "--max-faults 0: want 1 to 4"},
		{[]string{"--max-faults", "2"}, "--max-faults 2 without --exhaustive: it bounds an exhaustive search only"},
		{[]string{"--max-runs", "2"}, "--max-runs 2 without --exhaustive: it bounds an exhaustive search"},
		{[]string{"--exhaustive", "--max-runs", "0"}, "--max-runs 0: want 1 or more"},
		{[]string{"--exhaustive", "--seeds", "10"}, "--seeds 10 with --exhaustive: an exhaustive search runs the tree of one seed"},
		{[]string{"--exhaustive", "--swarm"}, "--swarm with --exhaustive: an exhaustive search places every fault kind"},
		{[]string{"--exhaustive", "--replay", "3"}, "--replay runs one seed: --exhaustive, which makes a search of placements, does not go with it"},
		{[]string{"--exhaustive", "--max-faults", "3", "--max-runs", "50"}, "max faults (--max-faults) 3: the tree of placements holds about"},
		{[]string{"--replay-faults", "1:1=lose-request"}, "--replay-faults needs --replay SEED"},
		{[]string{"--replay", "1", "--replay-faults", "1:1"}, "--replay-faults: explore options: fault \"1:1\": want CALL:ATTEMPT:METHOD=FAULT"},
	} {
		code, _, errOut := runCLI(t, append([]string{"explore", ambiguous}, c.args...)...)
		assert.Equal(t, exitUsage, code, strings.Join(c.args, " "))
		assert.Contains(t, errOut, c.want, strings.Join(c.args, " "))
	}
}
