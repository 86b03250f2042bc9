package transport_test

import (
	"testing"
	"time"

	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSwarm_ProfileIsTheSeeds: a swarm profile is a function of the seed
// and the kinds: the same seed draws the same profile; across seeds every
// kind is sometimes on and sometimes off; only the kinds given appear, at
// least one is on, no rate is above SwarmMaxRate and a profile's rates add
// up to at most SwarmMaxTotal, so it is a valid plan.
func TestSwarm_ProfileIsTheSeeds(t *testing.T) {
	kinds := transport.Rates{transport.LoseRequest: 0.04, transport.LoseResponse: 0.04, transport.Overloaded: 0.04, transport.Reset: 0}
	on := map[transport.Fault]int{}
	for seed := uint64(0); seed < 2000; seed++ {
		p := transport.Swarm(seed, kinds)
		require.Equal(t, p, transport.Swarm(seed, kinds), "seed %d", seed)
		require.NotEmpty(t, p, "seed %d: at least one kind is on", seed)
		sum := 0.0
		for f, r := range p {
			require.Contains(t, []transport.Fault{transport.LoseRequest, transport.LoseResponse, transport.Overloaded}, f, "seed %d: a kind not given, or given at rate 0", seed)
			require.Greater(t, r, 0.0)
			require.LessOrEqual(t, r, transport.SwarmMaxRate)
			sum += r
			on[f]++
		}
		require.LessOrEqual(t, sum, transport.SwarmMaxTotal+1e-12, "seed %d", seed)
		require.NoError(t, transport.Random(p).Validate())
	}
	for f, n := range on {
		assert.Greater(t, n, 800, "%v is on in about half the seeds", f)
		assert.Less(t, n, 1500, "%v is off in some seeds", f)
	}
	assert.NotEqual(t, transport.Swarm(1, kinds), transport.Swarm(2, kinds))
	assert.Empty(t, transport.Swarm(7, transport.Rates{}))
}

// TestSwarm_LatencySpread: a swarm seed's latency is off, a quarter, the
// sweep's own or four times it, each for some seeds, and the same for the
// same seed; a sweep without latency stays without.
func TestSwarm_LatencySpread(t *testing.T) {
	l := transport.Latency{P50: 2 * time.Millisecond, P99: 100 * time.Millisecond}
	seen := map[transport.Latency]int{}
	for seed := range uint64(400) {
		got := transport.SwarmLatency(seed, l)
		require.Equal(t, got, transport.SwarmLatency(seed, l))
		require.NoError(t, got.Validate())
		seen[got]++
	}
	assert.Len(t, seen, 4)
	for _, want := range []transport.Latency{{}, {P50: 500 * time.Microsecond, P99: 25 * time.Millisecond}, l, {P50: 8 * time.Millisecond, P99: 400 * time.Millisecond}} {
		assert.Greater(t, seen[want], 50, "%v", want)
	}
	assert.Equal(t, transport.Latency{}, transport.SwarmLatency(3, transport.Latency{}))
}
