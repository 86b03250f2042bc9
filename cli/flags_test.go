package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule H2: --replay runs one seed; the flags of a sweep that it ignored
// silently (--json was not written, --shard not honoured) are refused,
// naming them.
func TestH2_ReplayRefusesTheFlagsOfASweep(t *testing.T) {
	js := filepath.Join(t.TempDir(), "s.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--json", js}, "dosim: --replay runs one seed and shows its timeline; --json is for a sweep, which it would ignore: drop it, or sweep without --replay\n"},
		{[]string{"--shard", "0/2", "--seeds", "10"}, "dosim: --replay runs one seed and shows its timeline; --shard, --seeds are for a sweep, which it would ignore: drop them, or sweep without --replay\n"},
		{[]string{"--workers", "2"}, "--workers is for a sweep"},
		{[]string{"--first", "3"}, "--first is for a sweep"},
		{[]string{"--min-checked", "0.5"}, "--min-checked is for a sweep"},
		{[]string{"--check-determinism"}, "--check-determinism is for a sweep"},
		{[]string{"--no-shrink"}, "dosim: --replay shrinks the seed's faults only to write --artifacts: --no-shrink without --artifacts would be ignored\n"},
		{[]string{"--shrink-time", "5s"}, "--shrink-time without --artifacts would be ignored"},
	} {
		code, out, errOut := runCLI(t, append([]string{"explore", setQuantity, "--replay", "16"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Empty(t, out, tc.args)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
	_, err := os.Stat(js)
	assert.ErrorIs(t, err, os.ErrNotExist)
	code, out, _ := runCLI(t, "explore", setQuantity, "--replay", "16", "--rates", "lose-response=0.1", "--max-ambiguous", "5")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, out, "seed 16 (its own run: the 1 fault it drew) violates:")
}

// Rule H2: explore flags out of range or given twice are refused, naming
// the flag, the value and what is allowed: --max-ambiguous 0 became 10
// while the message for 21 said 1 to 20; a fault twice in --rates kept the
// last rate.
func TestH2_ExploreRefusesMaxAmbiguousZeroAndRatesTwice(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-ambiguous", "0"}, "dosim: --max-ambiguous 0: want 1 to 20 turns cut short (the check is exponential in it)\n"},
		{[]string{"--max-ambiguous", "21"}, "dosim: --max-ambiguous 21: want 1 to 20"},
		{[]string{"--max-ambiguous", "-1"}, "dosim: --max-ambiguous -1: want 1 to 20"},
		{[]string{"--rates", "lose-response=0.1,lose-response=0.2"}, "dosim: --rates: lose-response given twice: give each fault's rate once\n"},
		{[]string{"--rates", "lose-response=0.1, overloaded=0.1,lose-response=0.1"}, "--rates: lose-response given twice"},
	} {
		code, out, errOut := runCLI(t, append([]string{"explore", ambiguous, "--seeds", "2"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Empty(t, out, tc.args)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
	code, _, errOut := runCLI(t, "explore", ambiguous, "--seeds", "2", "--max-ambiguous", "1")
	assert.Equal(t, exitOK, code, errOut)
}

// Rule H2: amplify --trials and --seed say which operations to simulate,
// so without --fault and --rate they are refused (--trials -5 was
// accepted); --trials is in range either way, and --seed whose last
// trial's seed would wrap past 2^64 is refused, as explore refuses --first.
func TestH2_AmplifyTrialsAndSeed(t *testing.T) {
	sim := []string{"amplify", "--outer", "2", "--fault", "lose-response", "--rate", "0.3"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"amplify", "--outer", "2", "--trials", "-5"}, "dosim: amplify: --trials: it chooses the simulated operations, which only --fault and --rate start: give them too, or drop --trials\n"},
		{[]string{"amplify", "--outer", "2", "--seed", "7"}, "dosim: amplify: --seed: it chooses the simulated operations"},
		{append(sim, "--trials", "-5"), "dosim: amplify: --trials: -5 is out of range: want an integer from 1 to 10000000\n"},
		{append(sim, "--trials", "0"), "--trials: 0 is out of range"},
		{append(sim, "--seed", "18446744073709551615", "--trials", "3"), "dosim: amplify: --seed 18446744073709551615 with --trials 3: the last trial's seed, seed+trials-1, overflows a uint64: want a seed of at most 18446744073709551613\n"},
		{append(sim, "--seed", "18446744073709551000"), "with --trials 1000: the last trial's seed"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Empty(t, out, tc.args)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
	code, out, errOut := runCLI(t, append(sim, "--seed", "18446744073709551613", "--trials", "3")...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Simulated 3 operations (seeds 18446744073709551613 to 18446744073709551615)")
}

// Rule H2: SIGINT while the first failing seed is shrunk (after every
// seed ran) was swallowed: shrinking went on and explore exited 1. It now
// stops shrinking, prints the summary with the smallest failing set found
// so far, says so, and exits 130. The test cancels the context, as the
// signal does, at the first shrinking line: nothing here is timed.
func TestH2_ExploreInterruptedWhileShrinking(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &syncBuffer{hook: func(s string) {
		if strings.Contains(s, "shrinking: ") {
			cancel()
		}
	}}
	var stdout bytes.Buffer
	js := filepath.Join(t.TempDir(), "s.json")
	code := runContext(ctx, []string{"explore", setQuantity, "--json", js}, &stdout, stderr)
	assert.Equal(t, exitInterrupted, code, stderr.String())
	assert.Contains(t, stdout.String(), "first failing seed 1: 4 fault(s) drawn, shrinking interrupted after 1 replays; the smallest failing set found so far has 4:")
	assert.Contains(t, stderr.String(), "dosim: interrupted while shrinking seed 1: every seed was checked")
	data, err := os.ReadFile(js)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"shrink": "interrupted"`)
	code, _, errOut := runCLI(t, "explore", "merge", js)
	assert.Equal(t, exitExpect, code, "a complete sweep with a violation: %s", errOut)
}
