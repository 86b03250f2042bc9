package transport

import (
	"slices"

	"github.com/dosim/dosim/internal/splitmix"
)

// SwarmMaxRate bounds the rate a swarm profile gives one fault kind, and
// SwarmMaxTotal the rates of a profile together: the rest of the attempts
// are delivered, so a run still makes progress.
const (
	SwarmMaxRate  = 0.5
	SwarmMaxTotal = 0.9
)

// Swarm draws the fault profile of one seed of a swarm sweep (swarm
// testing, Groce et al., ISSTA 2012): each fault kind that kinds gives a
// rate above zero is on with probability one half (at least one is on),
// and an enabled kind's rate is drawn uniformly from (0, SwarmMaxRate];
// when the rates add up to more than SwarmMaxTotal they are scaled down to
// it. The magnitudes of kinds are not used, only which kinds it names.
// A connection fault (DropConnection) is on or off the same way, from a
// draw of its own, its rate per message and apart from that total.
//
// The profile is a function of the seed and the kinds alone, so a seed
// replays with its profile; it is drawn from a hash of the seed apart from
// the per-attempt draws (Draw), which it leaves alone. A profile that keeps
// a kind off for a whole run, or turns one up to a rate no fixed profile
// would use, finds the bugs that need many faults of one kind or none of
// another.
func Swarm(seed uint64, kinds Rates) Rates {
	var names, conns []Fault
	for f, r := range kinds {
		switch {
		case f == None || f >= numFaults || r <= 0:
		case f.OnConnection():
			conns = append(conns, f)
		default:
			names = append(names, f)
		}
	}
	slices.Sort(names)
	slices.Sort(conns)
	out := Rates{}
	if len(names) > 0 {
		swarmAttempts(seed, names, out)
	}
	// A connection fault's rate is per message, apart from the attempts'
	// total: on with probability one half, from a hash of its own, so that
	// naming it leaves the attempt profile of every seed as it was.
	y := splitmix.Hash(seed ^ 0x636f6e6e5f737761) // "conn_swa"
	for _, f := range conns {
		y = splitmix.Hash(y)
		if y&1 == 1 {
			y = splitmix.Hash(y)
			out[f] = float64(y>>11+1) / (1 << 53) * SwarmMaxRate
		}
	}
	return out
}

// swarmAttempts draws the attempt faults' profile (Swarm) into out.
func swarmAttempts(seed uint64, names []Fault, out Rates) {
	x := splitmix.Hash(seed ^ 0x2545f4914f6cdd1d)
	next := func() uint64 { x = splitmix.Hash(x); return x }
	on := make(map[Fault]bool, len(names))
	for _, f := range names {
		if next()&1 == 1 {
			on[f] = true
		}
	}
	if len(on) == 0 {
		on[names[next()%uint64(len(names))]] = true
	}
	sum := 0.0
	for _, f := range names {
		if on[f] {
			// (0, 1] in steps of 2^-53, times the cap: never zero.
			r := float64(next()>>11+1) / (1 << 53) * SwarmMaxRate
			out[f] = r
			sum += r
		}
	}
	if sum > SwarmMaxTotal {
		for _, f := range names {
			if on[f] {
				out[f] = out[f] * SwarmMaxTotal / sum
			}
		}
	}
}

// SwarmLatency draws the link latency of one seed of a swarm sweep from
// the sweep's own l: off, a quarter of it, as it is, or four times it
// (P99 at most MaxLatency), one in four seeds each, from a hash of the
// seed apart from Swarm's. A sweep without latency stays without.
func SwarmLatency(seed uint64, l Latency) Latency {
	if !l.On() {
		return l
	}
	switch splitmix.Hash(seed^0x9fb21c651e98df25) % 4 {
	case 0:
		return Latency{}
	case 1:
		return Latency{P50: l.P50 / 4, P99: l.P99 / 4}
	case 2:
		return l
	default:
		return Latency{P50: min(4*l.P50, MaxLatency), P99: min(4*l.P99, MaxLatency)}
	}
}
