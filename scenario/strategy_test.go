package scenario_test

import (
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

	sc, err = scenario.Parse("s.yaml", []byte(exploreFile("  strategy: mix\n  depth: 2\n")), builtIns)
	require.NoError(t, err)
	assert.Equal(t, runtime.StrategyMix, sc.Explore.Strategy)
	assert.Equal(t, 2, sc.Explore.Depth)
}

// H2: each bad value of the strategy fields is refused, naming the field,
// the value and what is allowed, with the name it was close to.
func TestExploreStrategy_BadValues(t *testing.T) {
	for _, tc := range []struct{ block, want string }{
		{"  strategy: pcy\n", `bad.yaml:7: explore.strategy: unknown strategy "pcy" (did you mean "pct"?); allowed are mix, random or pct (default mix)`},
		{"  strategy: chess\n", `bad.yaml:7: explore.strategy: unknown strategy "chess"; allowed are mix, random or pct (default mix)`},
		{"  strategy: [pct]\n", "bad.yaml:7: explore.strategy: is a list: want a string"},
		{"  depth: 0\n", "bad.yaml:7: explore.depth: 0 is out of range: want an integer from 1 to 10"},
		{"  depth: deep\n", "bad.yaml:7: explore.depth: is a string (\"deep\"): want an integer from 1 to 10"},
		{"  strategy: random\n  depth: 3\n", "bad.yaml:8: explore.depth: is 3 with strategy random: only pct and mix take a depth (PCT's d)"},
		{"  swarm: yes please\n", "bad.yaml:7: explore.swarm: is a string (\"yes please\"): want true or false"},
		{"  strategy: mix\n  swarm: true\n", "bad.yaml:8: explore.swarm: is true with strategy mix: a mix draws a swarm profile for its own share of the seeds; for swarm on every seed, say strategy: random"},
		{"  swarm: true\n  exhaustive: true\n", "bad.yaml:8: explore.exhaustive: is true with swarm: an exhaustive search places every fault kind of the rates itself, it draws no profile"},
		{"  strategy: mix\n  exhaustive: true\n", "bad.yaml:8: explore.exhaustive: is true with strategy mix: an exhaustive search runs one seed's tree, there are no seeds to mix; drop the strategy or say random"},
		{"  max-faults: 5\n", "bad.yaml:7: explore.max-faults: 5 is out of range: want an integer from 1 to 4"},
		{"  stratgy: pct\n", `bad.yaml:7: explore.stratgy: unknown field (did you mean "strategy"?); allowed are random, latency, expect, horizon, recurring-alarms, strategy, depth, swarm, exhaustive, max-faults, interleaving`},
	} {
		t.Run(tc.block, func(t *testing.T) {
			requireInvalid(t, exploreFile(tc.block), []string{tc.want})
		})
	}
}
