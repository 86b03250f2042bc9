package cli

import (
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
	assert.Contains(t, again, "seed "+m[2]+" violates:")

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
		{[]string{"--strategy", "chess"}, `--strategy "chess": want mix, random or pct`},
		{[]string{"--strategy", "randon"}, `--strategy "randon": want mix, random or pct (did you mean "random"?)`},
		{[]string{"--strategy", "mix", "--swarm"}, "--strategy mix with --swarm: a mix draws a swarm profile for its own share of the seeds"},
		{[]string{"--strategy", "mix", "--depth", "0"}, "--depth 0: want 1 to 10 (default 3)"},
		{[]string{"--strategy", "pct", "--depth", "0"}, "--depth 0: want 1 to 10 (default 3)"},
		{[]string{"--strategy", "pct", "--depth", "11"}, "--depth 11: want 1 to 10 (default 3)"},
		{[]string{"--strategy", "random", "--depth", "2"}, "--depth 2: only --strategy pct or mix takes a depth (the strategy is random)"},
		{[]string{"--swarm", "--depth", "2"}, "depth is 2 with the random strategy: only --strategy pct or mix takes a depth"},
	} {
		code, _, errOut := runCLI(t, append([]string{"explore", ambiguous, "--seeds", "2"}, bad.args...)...)
		assert.Equal(t, exitUsage, code, bad.args)
		assert.Contains(t, errOut, bad.want, bad.args)
	}
}
