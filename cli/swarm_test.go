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
	m := regexp.MustCompile(`replay: (dosim explore .* --replay (\d+) .*--swarm)\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)

	code, again, _ := runCLI(t, "explore", file, "--replay", m[2], "--swarm")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, again, "seed "+m[2]+" violates:")
	code, plain, _ := runCLI(t, "explore", file, "--replay", m[2])
	assert.NotEqual(t, again, plain, "without --swarm the seed runs at the fixed rates: another run")
	_ = code
}
