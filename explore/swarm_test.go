package explore_test

import (
	"testing"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chargeWithFallback is the zoo's fallback-charge bug (examples/zoo), on
// the caller's side: when the stub gives up on a charge with a retryable
// error (every one of its seven attempts failed so), the caller charges
// again under a new key, though a failed attempt may have charged
// already. Only a run in which all seven attempts of the call fail shows
// it: at the default rates (a retryable fault on 16% of attempts) that is
// about 0.16^7, three seeds in a million.
var chargeWithFallback = zooDriver(zoo.FoundBySwarm, "fallback-charge", false)

// TestSwarm_FindsWhatFixedRatesMiss: the fallback bug needs every attempt
// of one call to fail; 10,000 seeds at the default rates never draw that,
// and a swarm sweep, whose seeds turn some kinds up and others off, finds
// it within a few hundred seeds and reports the seed's profile.
func TestSwarm_FindsWhatFixedRatesMiss(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 seeds at the default rates; run without -short")
	}
	fixed, err := explore.RunFunc(explore.Options{Seeds: countSeeds(10000), Strategy: runtime.StrategyRandom, Workers: 2, NoLinearizability: true}, chargeWithFallback)
	require.NoError(t, err)
	assert.Equal(t, countSeeds(10000), fixed.Ran)
	assert.True(t, fixed.Clean(), "the planted bug is meant to be out of reach of fixed rates: %v", fixed.Violations)

	swarm, err := explore.RunFunc(explore.Options{Seeds: 1000, Swarm: true, NoLinearizability: true}, chargeWithFallback)
	require.NoError(t, err)
	require.NotNil(t, swarm.FirstFailing, "swarm must find the fallback bug in 1,000 seeds")
	f := swarm.FirstFailing
	assert.Contains(t, f.Violations[0].Message, "more than its 10")
	assert.Equal(t, rateNames(transport.Swarm(f.Seed, explore.DefaultRates())), f.Profile, "the failing seed's profile is reported")
	assert.True(t, swarm.Swarm)
	t.Logf("swarm: first failing seed %d of 1000, profile %s, %d failing seeds", f.Seed, explore.RatesText(f.Profile), swarm.Failed)

	// The seed replays with its profile: the same violations.
	again, err := explore.RunFunc(explore.Options{First: f.Seed, Seeds: 1, Swarm: true, NoLinearizability: true, NoShrink: true}, chargeWithFallback)
	require.NoError(t, err)
	require.NotNil(t, again.FirstFailing)
	assert.Equal(t, f.Seed, again.FirstFailing.Seed)
	assert.Equal(t, f.Profile, again.FirstFailing.Profile)
	require.NotNil(t, f.ProfileLatency)
	assert.Equal(t, transport.SwarmLatency(f.Seed, explore.DefaultLatency), *f.ProfileLatency)
	// Shrinking keeps only the faults the failure needs: at most the
	// call's seven attempts.
	assert.NotEmpty(t, f.Shrunk)
	assert.LessOrEqual(t, len(f.Shrunk), 7)
}

func rateNames(r transport.Rates) map[string]float64 {
	out := map[string]float64{}
	for f, v := range r {
		out[f.String()] = v
	}
	return out
}
