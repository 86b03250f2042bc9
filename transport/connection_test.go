package transport_test

import (
	"testing"

	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule W5: drop-connection strikes a WebSocket connection as a message
// is sent, at its rate per message, from a draw of its own: no attempt
// ever gets it, and the attempts of a seed draw as they would without it.
func TestW5_ADropIsDrawnPerMessageApartFromAttempts(t *testing.T) {
	base := transport.Rates{transport.LoseRequest: 0.3, transport.LoseResponse: 0.3}
	with := transport.Rates{transport.LoseRequest: 0.3, transport.LoseResponse: 0.3, transport.DropConnection: 0.25}
	a, b := transport.Random(base), transport.Random(with)
	for call := 1; call <= 2000; call++ {
		at := transport.Attempt{Seed: 7, Call: call, N: 1}
		fa, _ := a.Decide(at)
		fb, _ := b.Decide(at)
		require.Equal(t, fa, fb, "call %d: naming a connection fault moved an attempt's draw", call)
		require.NotEqual(t, transport.DropConnection, fb)
	}
	drops := 0
	for n := 1; n <= 4000; n++ {
		d := b.DropsConnection(7, 3, n, n%2 == 0)
		require.Equal(t, d, b.DropsConnection(7, 3, n, n%2 == 0), "the same seed, socket and message draw the same")
		require.False(t, a.DropsConnection(7, 3, n, true), "no rate, no drop")
		if d {
			drops++
		}
	}
	assert.InDelta(t, 1000, drops, 120, "about a quarter of the messages")
	var nilPlan *transport.FaultPlan
	assert.False(t, nilPlan.DropsConnection(7, 3, 1, true))
}

// A connection fault's rate counts apart from the attempt faults' total,
// is refused in a rule (it strikes no attempt), and Rates.OnConnection
// keeps it alone.
func TestW5_ADropIsARateNeverARule(t *testing.T) {
	require.NoError(t, transport.Random(transport.Rates{transport.LoseRequest: 0.9, transport.DropConnection: 0.5}).Validate())
	err := transport.Random(transport.Rates{transport.DropConnection: 1.5}).Validate()
	require.ErrorIs(t, err, transport.ErrInvalid)
	assert.ErrorContains(t, err, "random rate for drop-connection is 1.5, must be between 0 and 1")
	err = transport.Plan(transport.Rule{Method: "fetch", Fault: transport.DropConnection}).Validate()
	require.ErrorIs(t, err, transport.ErrInvalid)
	assert.EqualError(t, err, "invalid fault plan: rule 1: Fault drop-connection strikes a WebSocket connection, not an attempt: give it a rate (per message) instead")
	assert.Equal(t, transport.Rates{transport.DropConnection: 0.5}, transport.Rates{transport.LoseRequest: 0.1, transport.DropConnection: 0.5}.OnConnection())
	assert.Nil(t, transport.Rates{transport.LoseRequest: 0.1, transport.DropConnection: 0}.OnConnection())
	assert.True(t, transport.DropConnection.OnConnection())
	assert.False(t, transport.LoseResponse.OnConnection())
}

// A swarm profile that names drop-connection keeps every seed's attempt
// profile as it was without it, and turns the drop on in about half the
// seeds at a rate of at most SwarmMaxRate.
func TestW5_ASwarmDrawsDropsApart(t *testing.T) {
	kinds := transport.Rates{transport.LoseRequest: 0.04, transport.Overloaded: 0.04}
	withDrop := transport.Rates{transport.LoseRequest: 0.04, transport.Overloaded: 0.04, transport.DropConnection: 0.04}
	on := 0
	for seed := range uint64(1000) {
		got := transport.Swarm(seed, withDrop)
		r, ok := got[transport.DropConnection]
		delete(got, transport.DropConnection)
		require.Equal(t, transport.Swarm(seed, kinds), got, "seed %d", seed)
		if ok {
			on++
			require.Greater(t, r, 0.0)
			require.LessOrEqual(t, r, transport.SwarmMaxRate)
		}
	}
	assert.InDelta(t, 500, on, 80)
	assert.Equal(t, transport.Swarm(9, withDrop), transport.Swarm(9, withDrop))
}
