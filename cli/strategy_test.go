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
	assert.NotContains(t, out, "strategy", "the default strategy is not printed: reports stay as they were")
}

// H2: a bad --strategy or --depth names the flag and what is allowed.
func TestPCT_ExploreBadFlags(t *testing.T) {
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--strategy", "chess"}, `--strategy "chess": want random or pct`},
		{[]string{"--strategy", "pct", "--depth", "0"}, "--depth 0: want 1 to 10 (default 3)"},
		{[]string{"--strategy", "pct", "--depth", "11"}, "--depth 11: want 1 to 10 (default 3)"},
		{[]string{"--depth", "2"}, "--depth 2: only --strategy pct takes a depth (the strategy is random)"},
	} {
		code, _, errOut := runCLI(t, append([]string{"explore", ambiguous, "--seeds", "2"}, bad.args...)...)
		assert.Equal(t, exitUsage, code, bad.args)
		assert.Contains(t, errOut, bad.want, bad.args)
	}
}
