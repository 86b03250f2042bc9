package transport_test

import (
	"testing"
	"time"

	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// choicesPlan draws lose-request and lose-response at 10% each, with
// latency, from c.
func choicesPlan(c *transport.Choices) *transport.FaultPlan {
	rates := transport.Rates{transport.LoseRequest: 0.1, transport.LoseResponse: 0.1}
	l := transport.Latency{P50: 5 * time.Millisecond, P99: 200 * time.Millisecond}
	return transport.Random(rates).WithLatency(l).WithChoices(c)
}

// attempts are n attempts in the order a run might decide them.
func attempts(n int) []transport.Attempt {
	out := make([]transport.Attempt, n)
	for i := range out {
		out[i] = transport.Attempt{Seed: 7, Call: i/2 + 1, N: i%2 + 1, Method: "Add"}
	}
	return out
}

// Decision i reads byte i (an attempt's fault, then its latency), and
// once the bytes run out the seed decides as a plan without choices does:
// two inputs that share a prefix decide the same up to where they part.
func TestChoices_ArePrefixStable(t *testing.T) {
	seedOnly := choicesPlan(nil)
	as := attempts(40)
	base := []byte{220, 0, 0, 128, 255, 255, 230, 10, 0, 0}
	decide := func(data []byte) []transport.Decision {
		p := choicesPlan(transport.NewChoices(data))
		out := make([]transport.Decision, len(as))
		for i, a := range as {
			out[i] = p.DecideAttempt(a)
		}
		return out
	}
	got := decide(base)
	assert.Equal(t, transport.Decision{Fault: transport.LoseResponse}, got[0], "220 is in lose-response's bytes (204-229 at these rates); latency byte 0 adds none")
	assert.Equal(t, transport.None, got[1].Fault, "byte 0 delivers")
	assert.Equal(t, 5*time.Millisecond, got[1].Delay, "latency byte 128 is the median")
	assert.Equal(t, transport.LoseRequest, got[2].Fault, "byte 255 picks the first fault the rates name")
	assert.GreaterOrEqual(t, got[2].Delay, 200*time.Millisecond, "latency byte 255 is in the 1% tail")
	for i := len(base) / 2; i < len(as); i++ {
		assert.Equal(t, seedOnly.DecideAttempt(as[i]), got[i], "attempt %d: past the bytes the seed decides", i)
	}

	edited := append([]byte{}, base...)
	edited[4] = 0 // attempt 3's fault
	other := decide(edited)
	for i := range as {
		if i == 2 {
			assert.NotEqual(t, got[i], other[i])
			continue
		}
		assert.Equal(t, got[i], other[i], "an edit of one byte changes one decision")
	}

	longer := decide(append(append([]byte{}, base...), 220, 0))
	assert.Equal(t, got[:5], longer[:5], "appending bytes keeps every decision the prefix made")
	assert.Equal(t, transport.LoseResponse, longer[5].Fault)
}

// A run's choices are used up as it decides; Replay gives each attempt
// the latencies the bytes chose for it, by call and attempt, whatever the
// order, and leaves faults to the seed (a shrunk replay's rules).
func TestChoices_ReplayKeepsTheLatenciesByAttempt(t *testing.T) {
	c := transport.NewChoices([]byte{0, 200, 0, 40, 0, 90})
	p := choicesPlan(c)
	as := attempts(3)
	var first []time.Duration
	for _, a := range as {
		first = append(first, p.DecideAttempt(a).Delay)
	}
	assert.Equal(t, 6, c.Used())
	assert.NotEqual(t, first[0], first[1])

	replay := choicesPlan(c.Replay())
	seedOnly := choicesPlan(nil)
	for i := len(as) - 1; i >= 0; i-- { // another order: keyed, not read in turn
		d := replay.DecideAttempt(as[i])
		assert.Equal(t, first[i], d.Delay, "attempt %d", i)
		assert.Equal(t, seedOnly.DecideAttempt(as[i]).Fault, d.Fault, "the seed draws the faults")
	}
	extra := transport.Attempt{Seed: 7, Call: 9, N: 1}
	assert.Equal(t, seedOnly.DecideAttempt(extra), replay.DecideAttempt(extra), "an attempt the bytes never reached")
}

// A rule that gives an attempt its fault reads no fault byte: the bytes
// go to the decisions the plan draws.
func TestChoices_ARuleReadsNoFaultByte(t *testing.T) {
	c := transport.NewChoices([]byte{252, 252})
	p := transport.Plan(transport.Rule{Call: 1, Fault: transport.NotDelivered}).
		WithRandom(transport.Rates{transport.LoseResponse: 0.5}).WithChoices(c)
	require.Equal(t, transport.NotDelivered, p.DecideAttempt(transport.Attempt{Seed: 1, Call: 1, N: 1}).Fault)
	assert.Equal(t, 0, c.Used())
	assert.Equal(t, transport.LoseResponse, p.DecideAttempt(transport.Attempt{Seed: 1, Call: 2, N: 1}).Fault)
	assert.Equal(t, 1, c.Used())
}
