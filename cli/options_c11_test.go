package cli

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dosim/dosim/internal/optrange"
	"github.com/stretchr/testify/require"

	"github.com/stretchr/testify/assert"
)

// C11: the explore block and the flags go through one validator: the
// same values, given in the file or as flags, are accepted or refused
// alike, refused in the same words, the file's named by its field and
// line, the flags' by the flag.
func TestC11_TheFileAndTheFlagsGetTheSameAnswer(t *testing.T) {
	for _, tc := range []struct {
		block string   // the explore block's lines
		flags []string // the same as flags
		extra []string // given with both
		want  string   // what a refusal says, "" for none
	}{
		{"  depth: 11\n", []string{"--depth", "11"}, nil, "want 1 to 10 (PCT's d"},
		{"  depth: 0\n", []string{"--depth", "0"}, nil, "want 1 to 10 (PCT's d"},
		{"  depth: 4\n  strategy: pct\n", []string{"--depth", "4", "--strategy", "pct"}, []string{"--seeds", "3"}, ""},
		{"  max-faults: 5\n  exhaustive: true\n", []string{"--max-faults", "5", "--exhaustive"}, nil, "want 1 to 4 faults per placement"},
		{"  max-faults: 1\n  exhaustive: true\n", []string{"--max-faults", "1", "--exhaustive"}, nil, ""},
		{"  horizon: 24h\n", []string{"--horizon", "24h"}, []string{"--seeds", "3"}, ""},
		{"  horizon: 8760h\n", []string{"--horizon", "8760h"}, []string{"--seeds", "3"}, ""},
		{"  horizon: off\n", []string{"--horizon", "off"}, []string{"--seeds", "3"}, ""},
		{"  horizon: 0s\n", []string{"--horizon", "0s"}, nil, "want a virtual duration from 1ns to 8760h (a year)"},
		{"  horizon: 8761h\n", []string{"--horizon", "8761h"}, nil, "want a virtual duration from 1ns to 8760h (a year)"},
		{"  strategy: random\n  depth: 3\n", []string{"--strategy", "random", "--depth", "3"}, nil, "only pct and mix take a depth (PCT's d)"},
		{"  strategy: mix\n  swarm: true\n", []string{"--strategy", "mix", "--swarm"}, nil, "a mix draws a swarm profile for its own share of the seeds"},
		{"  swarm: true\n  exhaustive: true\n", []string{"--swarm", "--exhaustive"}, nil, "an exhaustive search places every fault kind of the rates itself"},
		{"  strategy: pct\n  exhaustive: true\n", []string{"--strategy", "pct", "--exhaustive"}, nil, "an exhaustive search runs one seed's tree with the random tie-break"},
		{"  depth: 5\n  exhaustive: true\n", []string{"--depth", "5", "--exhaustive"}, nil, "a depth is PCT's, and an exhaustive search runs the random tie-break"},
		{"  max-faults: 2\n", []string{"--max-faults", "2"}, nil, "it bounds an exhaustive search only, and would do nothing"},
	} {
		file := withExplore(t, tc.block)
		fileCode, fileOut, fileErr := runCLI(t, append([]string{"explore", file}, tc.extra...)...)
		flagCode, flagOut, flagErr := runCLI(t, append(append([]string{"explore", withExplore(t, "")}, tc.flags...), tc.extra...)...)
		name := strings.TrimSpace(tc.block)
		assert.Equal(t, fileCode, flagCode, "%s: exit codes: file %s%s, flags %s%s", name, fileOut, fileErr, flagOut, flagErr)
		if tc.want == "" {
			assert.NotEqual(t, exitUsage, fileCode, "%s: accepted: %s", name, fileErr)
			continue
		}
		assert.Equal(t, exitUsage, fileCode, name)
		assert.Contains(t, fileErr, tc.want, name)
		assert.Contains(t, flagErr, tc.want, name)
		assert.Contains(t, fileErr, "explore.", "%s: the file's field is named", name)
		assert.Contains(t, flagErr, "--", "%s: the flag is named", name)
	}
}

// C11: a combination the file alone makes is refused naming both fields
// and their lines.
func TestC11_AFilesPairIsNamedWithItsLines(t *testing.T) {
	file := withExplore(t, "  strategy: random\n  depth: 3\n")
	code, _, errOut := runCLI(t, "explore", file)
	assert.Equal(t, exitUsage, code)
	assert.Regexp(t, `the scenario's explore\.depth: 3 \(\S+s\.yaml:\d+\) with the scenario's explore\.strategy: random \(\S+s\.yaml:\d+\): only pct and mix take a depth`, errOut)
	code, _, errOut = runCLI(t, "explore", file, "--depth", "2")
	assert.Equal(t, exitUsage, code)
	assert.Regexp(t, `--depth 2 with the scenario's explore\.strategy: random \(\S+s\.yaml:\d+\): only pct and mix take a depth`, errOut)
}

// C11: the flag help and docs/scenarios.md list one set of ranges, the
// explorer's (internal/optrange): each flag's help says its range in its
// words, and the docs' table of ranges gives the same bounds.
func TestC11_TheFlagHelpAndTheDocsListOneSetOfRanges(t *testing.T) {
	_, help, _ := runCLI(t, "explore", "--help")
	help = strings.Join(strings.Fields(help), " ")
	docs, err := os.ReadFile(filepath.Join(repoRoot, "docs", "scenarios.md"))
	require.NoError(t, err)
	bounds := func(lo, hi string) string {
		if hi == "" {
			return lo + " or more"
		}
		return lo + " to " + hi
	}
	for _, r := range []optrange.Int{optrange.Seeds, optrange.Workers, optrange.MaxAmbiguous, optrange.Depth, optrange.MaxFaults, optrange.MaxRuns} {
		assert.Contains(t, help, strings.Join(strings.Fields(r.Want), " "), "--%s's help", r.Name)
		hi := strconv.Itoa(r.Max)
		if r.Max == math.MaxInt {
			hi = ""
		}
		assert.Regexp(t, "(?m)^\\| "+regexp.QuoteMeta(r.Name)+" \\| `--"+regexp.QuoteMeta(r.Name)+" [A-Z]+` \\| [^|]*\\| "+regexp.QuoteMeta(bounds(strconv.Itoa(r.Min), hi))+" ", string(docs), "docs/scenarios.md's row of %s", r.Name)
	}
	for _, r := range []optrange.Duration{optrange.Horizon, optrange.ShrinkTime} {
		assert.Contains(t, help, strings.Join(strings.Fields(r.Want), " "), "--%s's help", r.Name)
	}
	assert.Contains(t, string(docs), "| horizon | `--horizon D` | `horizon` | 1ns to 8760h (a year), or `off` (24h) |")
	assert.Contains(t, string(docs), "| shrink-time | `--shrink-time D` | | 1ms or more (60s) |")
	assert.Contains(t, help, optrange.MinCheckedWant)
}
