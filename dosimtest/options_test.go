package dosimtest_test

import (
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
)

// U3: a test of a class sets its search with dosimtest.Options, without
// package explore: each field is the explorer's option of the same name,
// and the swarm strategy is the random strategy with a swarm profile per
// seed (one strategy type, runtime.Strategy).
func TestU3_OptionsAreTheExplorersOwn(t *testing.T) {
	rates := transport.Rates{transport.LoseResponse: 0.1}
	o := dosimtest.Options{Seeds: 50, First: 3, Rates: rates, Strategy: runtime.StrategySwarm, FailFast: true, Interleaving: []string{"alarm"}}
	assert.Equal(t, explore.Options{Seeds: 50, First: 3, Rates: rates, Strategy: runtime.StrategyRandom, Swarm: true, FailFast: true, Interleaving: []string{"alarm"}}, o.Explore())
	assert.Equal(t, explore.Options{Exhaustive: true, MaxFaults: 2, Strategy: runtime.StrategyPCT, Depth: 4},
		dosimtest.Options{Exhaustive: true, MaxFaults: 2, Strategy: runtime.StrategyPCT, Depth: 4}.Explore())

	// Func takes either; the summary says what ran (the counter's planted
	// bug fails it).
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, dosimtest.Options{Seeds: 20, Strategy: runtime.StrategySwarm, Rates: rates}, counterFunc)
	assert.True(t, sum.Swarm)
	assert.Equal(t, 20, sum.Ran)
	assert.Positive(t, sum.Failed)
	assert.Len(t, ft.errors, 1)
}
