// Package backoff holds the delay formulas of dosim's two retry mechanisms.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Stub retry backoff (rule S8).
const (
	StubBase = 500 * time.Millisecond
	StubCap  = 2 * time.Second
)

// StubCapFor returns the upper bound of the sleep before the next retry when
// attempts have been made so far: min(500ms·2^(attempts-1), 2s).
func StubCapFor(attempts int) time.Duration {
	if attempts < 1 {
		attempts = 1
	}
	if attempts > 3 {
		return StubCap
	}
	return min(StubBase<<(attempts-1), StubCap)
}

// Stub draws the full-jitter sleep before the next retry: a whole number of
// milliseconds uniform in [0, StubCapFor(attempts)], inclusive (rule S8).
func Stub(rng *rand.Rand, attempts int) time.Duration {
	capMs := StubCapFor(attempts).Milliseconds()
	return time.Duration(rng.Int64N(capMs+1)) * time.Millisecond
}

// AgentsCap returns min(2^attempt·base, max), the exclusive upper bound of
// the delay after failed attempt `attempt` of object.Retry (rule A2).
func AgentsCap(attempt int, base, max time.Duration) time.Duration {
	if attempt > 40 {
		return max
	}
	d := base << attempt
	if d <= 0 || d > max {
		return max
	}
	return d
}

// Agents draws the delay after failed attempt `attempt` (from 1): a whole
// number of milliseconds uniform in [0, AgentsCap) (rule A2).
func Agents(rng *rand.Rand, attempt int, base, max time.Duration) time.Duration {
	capMs := AgentsCap(attempt, base, max).Milliseconds()
	if capMs <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(capMs)) * time.Millisecond
}
