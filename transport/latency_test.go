package transport_test

import (
	"testing"
	"time"

	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLatency_HasTheQuantilesItNames: over many attempts, half the
// latencies are under p50, 99% under p99, none at or past 2·p99; the same
// attempt draws the same latency, its reply another; the fault drawn for
// an attempt is the same with latency or without (latency draws are apart
// from fault draws, so a shrunk fault set keeps the seed's latencies).
func TestLatency_HasTheQuantilesItNames(t *testing.T) {
	l := transport.Latency{P50: 5 * time.Millisecond, P99: 200 * time.Millisecond}
	rates := transport.Rates{transport.LoseResponse: 0.1}
	plain, timed := transport.Random(rates), transport.Random(rates).WithLatency(l)
	require.NoError(t, timed.Validate())
	const n = 100000
	var under50, under99, differ int
	for i := range n {
		a := transport.Attempt{Seed: 42, Call: i/3 + 1, N: i%3 + 1}
		d := timed.DecideAttempt(a)
		require.Equal(t, plain.DecideAttempt(a).Fault, d.Fault)
		require.Equal(t, d, timed.DecideAttempt(a), "the same attempt draws the same latency")
		require.Less(t, d.Delay, 2*l.P99)
		require.GreaterOrEqual(t, d.Delay, time.Duration(0))
		if d.Delay < l.P50 {
			under50++
		}
		if d.Delay < l.P99 {
			under99++
		}
		if timed.ReplyDelay(a) != d.Delay {
			differ++
		}
	}
	assert.InDelta(t, 0.50, float64(under50)/n, 0.01)
	assert.InDelta(t, 0.99, float64(under99)/n, 0.002)
	assert.Greater(t, differ, n*9/10, "a reply's latency is a draw of its own")
	assert.Zero(t, plain.ReplyDelay(transport.Attempt{Seed: 1, Call: 1, N: 1}), "no latency without a distribution")
	assert.Equal(t, l, timed.WithRandom(transport.Rates{transport.LoseRequest: 0.1}).Latency(), "adding rates keeps the latency")
}

// TestLatency_BadInput: a distribution out of range names its field.
func TestLatency_BadInput(t *testing.T) {
	for _, tc := range []struct {
		l    transport.Latency
		want string
	}{
		{transport.Latency{P50: -time.Millisecond, P99: time.Millisecond}, "latency p50 is -1ms, must be >= 0"},
		{transport.Latency{P50: 5 * time.Millisecond, P99: time.Millisecond}, "latency p99 is 1ms, must be at least p50 (5ms)"},
		{transport.Latency{P50: time.Second, P99: time.Minute}, "latency p99 is 1m0s, must be at most 10s"},
	} {
		err := transport.Plan().WithLatency(tc.l).Validate()
		require.ErrorIs(t, err, transport.ErrInvalid)
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.Equal(t, "off", transport.Latency{}.String())
	assert.Equal(t, "p50=5ms,p99=200ms", transport.Latency{P50: 5 * time.Millisecond, P99: 200 * time.Millisecond}.String())
}
