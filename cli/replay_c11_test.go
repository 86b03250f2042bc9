package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// C11: a replayed fault that strikes nothing is an error naming it, never
// a fault-free run that says "no violation": a method the call does not
// have, a call or an attempt the run never made.
func TestC11_AFaultThatStrikesNothingIsRefused(t *testing.T) {
	file := "../testdata/scenarios/booth-leaky.yaml"
	for _, tc := range []struct{ faults, want string }{
		{"1:1:Nope=lose-response", "1:1:Nope=lose-response (call 1 is Hold, not Nope)"},
		{"99:1:Pay=lose-response", "99:1:Pay=lose-response (the run made"},
		{"3:7:Pay=lose-response", "3:7:Pay=lose-response (call 3 (Pay) made 1 attempt(s): there is no attempt 7)"},
	} {
		code, out, errOut := runCLI(t, "explore", file, "--replay", "1", "--replay-faults", tc.faults)
		assert.Equal(t, exitUsage, code, "%s: %s", tc.faults, out)
		assert.Contains(t, errOut, "--replay-faults: a replayed fault struck nothing: "+tc.want)
		assert.NotContains(t, out, "no violation")
	}
	code, out, errOut := runCLI(t, "explore", file, "--replay", "1", "--replay-faults", "3:1:Pay=lose-response")
	assert.Equal(t, exitExpect, code, errOut)
	assert.Contains(t, out, "seed 1 with the faults --replay-faults gave only (1) violates:")
}

// replayLine is the replay command a report printed, as arguments, and
// the seed it replays.
var replayLine = regexp.MustCompile(`(?m)^replay: dosim (explore .* --replay (\d+)\b.*)$`)

// C11: every printed replay line reproduces its verdict: each shipped
// scenario is swept with options that change verdicts (a short horizon,
// recurring alarms, few turns cut short, no linearizability check, the
// scenario's own rules kept, each strategy, swarm, an exhaustive search),
// and the replay line its report prints, run, shows the violations the
// sweep found in that seed (in its own run, or with the faults an
// exhaustive search prints), byte for byte.
func TestC11_EveryPrintedReplayLineReplaysItsVerdict(t *testing.T) {
	files, err := filepath.Glob("../testdata/scenarios/*.yaml")
	require.NoError(t, err)
	variants := [][]string{
		nil,
		{"--horizon", "1ns"},
		{"--recurring-alarms", "--max-ambiguous", "1"},
		{"--no-linearizability", "--keep-rules"},
		{"--strategy", "pct", "--depth", "2"},
		{"--swarm"},
		{"--exhaustive", "--max-faults", "1"},
	}
	seeds := "40"
	if raceOn {
		seeds = "8"
	}
	replayed := 0
	for _, f := range files {
		for _, v := range variants {
			name := filepath.Base(f) + "/" + strings.Join(v, "_")
			t.Run(name, func(t *testing.T) {
				js := filepath.Join(t.TempDir(), "sum.json")
				args := append([]string{"explore", f, "--json", js, "--no-shrink"}, v...)
				if !slices.Contains(v, "--exhaustive") {
					args = append(args, "--seeds", seeds)
				}
				code, out, errOut := runCLI(t, args...)
				if code == exitOK {
					return // nothing to replay
				}
				require.Equal(t, exitExpect, code, errOut)
				sum := readSum(t, js)
				if len(sum.Violations) == 0 {
					return // failed on too few checked, with nothing to replay
				}
				m := replayLine.FindStringSubmatch(out)
				require.NotNil(t, m, "the report prints a replay line:\n%s", out)
				want := violationsOf(sum, m[2])
				code, again, errOut := runCLI(t, strings.Fields(m[1])...)
				require.Equal(t, exitExpect, code, "the replay line %q: %s%s", m[1], again, errOut)
				at := strings.Index(again, " violates:\n")
				require.GreaterOrEqual(t, at, 0, again)
				assert.Equal(t, want, again[at+len(" violates:\n"):], "the replay line %q", m[1])
				replayed++
			})
		}
	}
	assert.Greater(t, replayed, 20, "enough sweeps failed to try their replay lines")
}

// readSum reads the summary a sweep wrote with --json.
func readSum(t *testing.T, path string) *explore.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var sum explore.Summary
	require.NoError(t, json.Unmarshal(data, &sum))
	return &sum
}

// violationsOf is what a replay of seed prints under "violates:": the
// violations the sweep found in it (for an exhaustive search, those of
// its first failing placement), one a line.
func violationsOf(sum *explore.Summary, seed string) string {
	var b strings.Builder
	vs := sum.Violations
	if sum.Exhaustive != nil && sum.FirstFailing != nil {
		vs = sum.FirstFailing.Violations
	}
	for _, v := range vs {
		if s := v.String(); strings.HasPrefix(s, "seed "+seed+":") {
			b.WriteString("  " + render.Escape(s) + "\n")
		}
	}
	return b.String()
}
