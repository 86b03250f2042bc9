package cli

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSwarm_ExploreSaysItAndReplays: explore --swarm says so in its
// report, prints the failing seed's own profile, and its replay line
// carries --swarm, which replays the seed with that profile.
func TestSwarm_ExploreSaysItAndReplays(t *testing.T) {
	file := "../testdata/scenarios/mailer-vs-ledger.yaml"
	code, out, errOut := runCLI(t, "explore", file, "--seeds", "200", "--swarm")
	require.Equal(t, exitExpect, code, errOut)
	assert.Contains(t, out, "(swarm: each seed draws its own profile of these kinds)")
	assert.Regexp(t, `its swarm profile: [a-z-]+=0\.\d+`, out)
	m := regexp.MustCompile(`replay: (dosim explore .* --replay (\d+) .*--swarm --strategy random)\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)

	code, again, _ := runCLI(t, "explore", file, "--replay", m[2], "--swarm")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, again, "seed "+m[2]+" (its own run: the ")
	code, plain, _ := runCLI(t, "explore", file, "--replay", m[2], "--strategy", "random")
	assert.NotEqual(t, again, plain, "without --swarm the seed runs at the fixed rates: another run")
	_ = code
}

// TestLatency_ExploreFlag: --latency sets the sweep's latency, off turns
// it off, and a bad value names the flag and the form it takes.
func TestLatency_ExploreFlag(t *testing.T) {
	code, out, errOut := runCLI(t, "explore", ambiguous, "--seeds", "20", "--latency", "p50=1ms,p99=30ms")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, ", latency p50=1ms,p99=30ms\n")
	code, out, _ = runCLI(t, "explore", ambiguous, "--seeds", "20", "--latency", "off")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, ", latency off\n")
	code, out, _ = runCLI(t, "explore", ambiguous, "--seeds", "20")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, ", latency p50=2ms,p99=100ms\n", "on by default for explore")
	for _, bad := range []struct{ v, want string }{
		{"fast", `--latency: invalid fault plan: latency "fast": want p50=DURATION,p99=DURATION`},
		{"p50=1ms", `p99 is missing`},
		{"p50=9ms,p99=1ms", "latency p99 is 1ms, must be at least p50 (9ms)"},
		{"p99=1h", "must be at most 10s"},
	} {
		code, _, errOut := runCLI(t, "explore", ambiguous, "--seeds", "20", "--latency", bad.v)
		assert.Equal(t, exitUsage, code, bad.v)
		assert.Contains(t, errOut, bad.want, bad.v)
	}
}
