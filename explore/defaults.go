package explore

import (
	goruntime "runtime"
	"time"

	"github.com/dosim/dosim/transport"
)

// DefaultLatency is the link latency of a sweep's runs when neither the
// options nor the scenario's explore block give one: a median of 2 ms and
// 1% of the attempts and replies slower than 100 ms, enough for a retry
// (whose first backoff is 100 ms at most) to be overtaken by a later call,
// and for replies to come back out of order, within what the rules allow.
var DefaultLatency = transport.Latency{P50: 2 * time.Millisecond, P99: 100 * time.Millisecond}

// DefaultRates are the fault rates used when neither the options nor the
// scenario's explore block give any: every fault kind the runtime has
// (rule C9), the link's on 4% of attempts each, and transport.Reset and
// transport.StorageWriteFails, which open crash windows (a reset, or
// writes that vanish, between an effect and the write that remembers
// it), on DefaultCrashRate of them: rarer, as a reset cuts a turn short
// and makes its history harder to judge. A swarm seed draws its profile
// over all of them.
func DefaultRates() transport.Rates {
	r := transport.Rates{}
	for _, f := range transport.Faults() {
		r[f] = 0.04
		if f == transport.Reset || f == transport.StorageWriteFails {
			r[f] = DefaultCrashRate
		}
	}
	return r
}

// DefaultCrashRate is the default rate of transport.Reset and
// transport.StorageWriteFails (DefaultRates).
const DefaultCrashRate = 0.01

// DefaultWorkers is how many seeds a sweep checks in parallel when the
// options do not say: runtime.NumCPU(), at most 256.
func DefaultWorkers() int { return min(goruntime.NumCPU(), 256) }
