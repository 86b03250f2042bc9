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
// scenario's explore block give any: each fault on 4% of attempts, but
// transport.Reset and transport.StorageWriteFails, which a sweep draws
// only when its rates name them.
func DefaultRates() transport.Rates {
	r := transport.Rates{}
	for _, f := range transport.Faults() {
		if f == transport.Reset || f == transport.StorageWriteFails {
			continue
		}
		r[f] = 0.04
	}
	return r
}

// DefaultWorkers is how many seeds a sweep checks in parallel when the
// options do not say: runtime.NumCPU(), at most 256.
func DefaultWorkers() int { return min(goruntime.NumCPU(), 256) }
