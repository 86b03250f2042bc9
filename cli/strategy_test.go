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

// TestPCT_ExploreFlagSaysItAndReplays: explore --strategy pct says so in
// its report (with the depth and the k it measured), and its replay line
// carries --strategy pct --depth 3, which replays the failing seed.
func TestPCT_ExploreFlagSaysItAndReplays(t *testing.T) {
	code, out, errOut := runCLI(t, "explore", setQuantity, "--strategy", "pct")
	require.Equal(t, exitExpect, code, errOut)
	assert.Regexp(t, `\nstrategy pct \(depth 3, change points among \d+ steps\)\n`, out)
	m := regexp.MustCompile(`replay: (dosim explore .* --replay (\d+) .* --strategy pct --depth 3)\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	args := strings.Fields(m[1])[1:]
	args[1] = setQuantity
	code, again, errOut := runCLI(t, args...)
	assert.Equal(t, exitExpect, code, errOut)
	assert.Contains(t, again, "seed "+m[2]+" (its own run: the ")

	code, out, _ = runCLI(t, "explore", setQuantity, "--seeds", "5")
	assert.NotEqual(t, exitUsage, code)
	assert.Contains(t, out, "\nstrategy mix (each seed draws its own: random=", "the default, mix, is printed with its shares")
}

// H2: a bad --strategy or --depth names the flag and what is allowed.
func TestPCT_ExploreBadFlags(t *testing.T) {
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--strategy", "chess"}, `--strategy chess: want mix, random, swarm or pct`},
		{[]string{"--strategy", "randon"}, `--strategy randon: want mix, random, swarm or pct (did you mean "random"?)`},
		{[]string{"--strategy", "mix", "--swarm"}, "--swarm with --strategy mix: a mix draws a swarm profile for its own share of the seeds"},
		{[]string{"--strategy", "mix", "--depth", "0"}, "--depth 0: want 1 to 10 (PCT's d"},
		{[]string{"--strategy", "pct", "--depth", "0"}, "--depth 0: want 1 to 10 (PCT's d"},
		{[]string{"--strategy", "pct", "--depth", "11"}, "--depth 11: want 1 to 10 (PCT's d"},
		{[]string{"--strategy", "random", "--depth", "2"}, "--depth 2 with --strategy random: only pct and mix take a depth (PCT's d)"},
		{[]string{"--swarm", "--depth", "2"}, "--depth 2 with --swarm: swarm runs the random strategy, and only pct and mix take a depth"},
	} {
		code, _, errOut := runCLI(t, append([]string{"explore", ambiguous, "--seeds", "2"}, bad.args...)...)
		assert.Equal(t, exitUsage, code, bad.args)
		assert.Contains(t, errOut, bad.want, bad.args)
	}
}

// withExplore is a copy of the setquantity scenario, in a temporary
// folder, whose explore block also holds lines.
func withExplore(t *testing.T, lines string) string {
	t.Helper()
	data, err := os.ReadFile(setQuantity)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(path, append(data, []byte(lines)...), 0o644))
	return path
}

// The scenario's explore block says how to search it; the flags override
// it. PCT alone runs without latency unless --latency says otherwise.
func TestMix_ExploreTakesTheFilesStrategyFlagsOverride(t *testing.T) {
	pct := withExplore(t, "  strategy: pct\n  depth: 2\n")
	_, out, errOut := runCLI(t, "explore", pct, "--seeds", "5")
	assert.Regexp(t, `\nstrategy pct \(depth 2, change points among \d+ steps\)\n`, out, errOut)
	assert.Contains(t, out, ", latency off\n", "pct's latency is off by default")
	_, out, _ = runCLI(t, "explore", pct, "--seeds", "5", "--latency", "p50=1ms,p99=9ms")
	assert.Contains(t, out, ", latency p50=1ms,p99=9ms\n", "an explicit --latency applies")
	_, out, errOut = runCLI(t, "explore", pct, "--seeds", "5", "--strategy", "random")
	assert.Contains(t, out, "\nstrategy random\n", "--strategy overrides the file's, and its depth")
	// Rule C11: a flag that overrides a file's field says so.
	assert.Contains(t, errOut, "dosim explore: --strategy random overrides the scenario's explore.strategy: pct\n")
	assert.Contains(t, errOut, "dosim explore: --strategy random overrides the scenario's explore.depth: 2\n")
	_, out, _ = runCLI(t, "explore", pct, "--seeds", "5", "--depth", "4")
	assert.Regexp(t, `\nstrategy pct \(depth 4, `, out, "--depth overrides the file's depth")

	swarm := withExplore(t, "  swarm: true\n")
	_, out, _ = runCLI(t, "explore", swarm, "--seeds", "5")
	assert.Contains(t, out, "(swarm: each seed draws its own profile of these kinds)")
	_, out, _ = runCLI(t, "explore", swarm, "--seeds", "5", "--strategy", "mix")
	assert.NotContains(t, out, "(swarm: each seed", "an explicit strategy replaces the file's swarm")

	exh := withExplore(t, "  exhaustive: true\n  max-faults: 1\n")
	code, out, errOut := runCLI(t, "explore", exh)
	assert.Equal(t, exitExpect, code, errOut)
	assert.Contains(t, out, "exhaustive: up to 1 fault(s) of lose-response at every decision point")
	_, out, errOut = runCLI(t, "explore", exh, "--seeds", "5")
	assert.Contains(t, out, "5 seeds run", "--seeds sweeps seeds instead")
	assert.Contains(t, errOut, "dosim explore: --seeds 5 overrides the scenario's explore.exhaustive: true\n")
	assert.Contains(t, errOut, "dosim explore: --seeds 5 overrides the scenario's explore.max-faults: 1\n")
	_, out, _ = runCLI(t, "explore", exh, "--exhaustive=false")
	assert.Contains(t, out, "1000 seeds run")
	code, _, errOut = runCLI(t, "explore", exh, "--keep-rules")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "an exhaustive search places its own faults at every decision point")

	bad := withExplore(t, "  strategy: pcy\n")
	code, _, errOut = runCLI(t, "explore", bad)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `explore.strategy: unknown strategy "pcy" (did you mean "pct"?); allowed are mix, random or pct (default mix)`)
}
