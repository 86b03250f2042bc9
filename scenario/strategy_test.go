package scenario_test

import (
	"time"

	"testing"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exploreFile is a scenario whose explore block is block.
func exploreFile(block string) string {
	return head + "calls: [{stub: shop, method: Get, args: [a]}]\nexplore:\n" + block
}

// The explore block says how to search the scenario: strategy, depth,
// swarm, exhaustive and max-faults, read into Scenario.Explore.
func TestExploreStrategy_FieldsAreRead(t *testing.T) {
	sc, err := scenario.Parse("s.yaml", []byte(exploreFile("  strategy: pct\n  depth: 4\n  swarm: true\n  max-faults: 3\n")), builtIns)
	require.NoError(t, err)
	assert.Equal(t, runtime.StrategyPCT, sc.Explore.Strategy)
	assert.Equal(t, 4, sc.Explore.Depth)
	assert.True(t, sc.Explore.Swarm)
	assert.Equal(t, 3, sc.Explore.MaxFaults)
	assert.False(t, sc.Explore.Exhaustive)

	sc, err = scenario.Parse("s.yaml", []byte(exploreFile("  exhaustive: true\n  max-faults: 1\n")), builtIns)
	require.NoError(t, err)
	assert.True(t, sc.Explore.Exhaustive)
	assert.Equal(t, runtime.Strategy(""), sc.Explore.Strategy, "no strategy named: the explorer's default")

	sc, err = scenario.Parse("s.yaml", []byte(exploreFile("  horizon: 24h\n")), builtIns)
	require.NoError(t, err, "the default horizon is in range (rule C11)")
	assert.Equal(t, 24*time.Hour, sc.Explore.Horizon)
	sc, err = scenario.Parse("s.yaml", []byte(exploreFile("  horizon: off\n")), builtIns)
	require.NoError(t, err)
	assert.Negative(t, sc.Explore.Horizon, "off")

	sc, err = scenario.Parse("s.yaml", []byte(exploreFile("  strategy: mix\n  depth: 2\n")), builtIns)
	require.NoError(t, err)
	assert.Equal(t, runtime.StrategyMix, sc.Explore.Strategy)
	assert.Equal(t, 2, sc.Explore.Depth)
}

// H2: each bad value of the strategy fields is refused, naming the field,
// the value and what is allowed, with the name it was close to. Fields
// that cannot go together are the explorer's to refuse, once the flags
// are merged in (explore.TestC11_*).
func TestExploreStrategy_BadValues(t *testing.T) {
	for _, tc := range []struct{ block, want string }{
		{"  strategy: pcy\n", `bad.yaml:7: explore.strategy: unknown strategy "pcy" (did you mean "pct"?); allowed are mix, random or pct (default mix)`},
		{"  strategy: chess\n", `bad.yaml:7: explore.strategy: unknown strategy "chess"; allowed are mix, random or pct (default mix)`},
		{"  strategy: [pct]\n", "bad.yaml:7: explore.strategy: is a list: want a string"},
		{"  depth: 0\n", "bad.yaml:7: explore.depth: 0 is out of range: want 1 to 10 (PCT's d: the ordering constraints a bug may need)"},
		{"  depth: deep\n", "bad.yaml:7: explore.depth: is a string (\"deep\"): want 1 to 10 (PCT's d: the ordering constraints a bug may need)"},
		{"  swarm: yes please\n", "bad.yaml:7: explore.swarm: is a string (\"yes please\"): want true or false"},
		{"  max-faults: 5\n", "bad.yaml:7: explore.max-faults: 5 is out of range: want 1 to 4 faults per placement (the tree grows as the decision points to the power of the faults)"},
		// Rule C11: the horizon's range is --horizon's.
		{"  horizon: 0s\n", "bad.yaml:7: explore.horizon: 0s is out of range: want a virtual duration from 1ns to 8760h (a year), such as 24h, or off (no liveness check, no bound)"},
		{"  horizon: 9000h\n", "bad.yaml:7: explore.horizon: 9000h is out of range: want a virtual duration from 1ns to 8760h (a year), such as 24h, or off (no liveness check, no bound)"},
		{"  horizon: soon\n", "bad.yaml:7: explore.horizon: \"soon\" is not a duration: want a virtual duration from 1ns to 8760h (a year), such as 24h, or off (no liveness check, no bound)"},
		{"  stratgy: pct\n", `bad.yaml:7: explore.stratgy: unknown field (did you mean "strategy"?); allowed are random, latency, expect, horizon, recurring-alarms, strategy, depth, swarm, exhaustive, max-faults, interleaving`},
	} {
		t.Run(tc.block, func(t *testing.T) {
			requireInvalid(t, exploreFile(tc.block), []string{tc.want})
		})
	}
}
