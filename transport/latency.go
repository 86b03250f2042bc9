package transport

import (
	"fmt"
	"github.com/dosim/dosim/internal/splitmix"
	"strconv"
	"strings"
	"time"
)

// MaxLatency bounds Latency.P99: a latency near the stub's longest
// timeout (60 s) would only turn every call into a timeout.
const MaxLatency = 10 * time.Second

// Latency is a distribution of random link latency, drawn for each attempt
// on its way to the object and for each reply on its way back, from the
// seed (FaultPlan.WithLatency). Its zero value adds none.
//
// The distribution has exactly the quantiles it names, and is piecewise
// uniform so that it needs no floating-point function that could round
// differently on another machine: half of the draws are uniform in
// [0, P50), 49% in [P50, P99), and 1% in [P99, 2·P99), in whole
// microseconds.
//
// Latency reorders what the rules allow to be reordered (rule L1): calls
// through one stub still reach the object in the order they were made,
// while a retry, which travels on a connection of its own, and calls of
// other stubs may overtake one another, and so may replies.
type Latency struct {
	P50 time.Duration `json:"p50,omitempty"`
	P99 time.Duration `json:"p99,omitempty"`
}

// On reports whether the distribution adds any latency.
func (l Latency) On() bool { return l.P99 > 0 }

// String writes the distribution as the --latency flag takes it.
func (l Latency) String() string {
	if !l.On() {
		return "off"
	}
	return fmt.Sprintf("p50=%v,p99=%v", l.P50, l.P99)
}

// Validate says what is wrong with the distribution, naming the field.
func (l Latency) Validate() error {
	switch {
	case l.P50 < 0:
		return fmt.Errorf("%w: latency p50 is %v, must be >= 0", ErrInvalid, l.P50)
	case l.P99 < l.P50:
		return fmt.Errorf("%w: latency p99 is %v, must be at least p50 (%v)", ErrInvalid, l.P99, l.P50)
	case l.P99 > MaxLatency:
		return fmt.Errorf("%w: latency p99 is %v, must be at most %v", ErrInvalid, l.P99, MaxLatency)
	}
	return nil
}

// WithLatency returns a copy of p that adds random latency from l to every
// attempt (on top of a matching rule's Delay) and to every reply
// (ReplyDelay).
func (p *FaultPlan) WithLatency(l Latency) *FaultPlan {
	out := p.WithRandom(nil)
	out.latency = l
	return out
}

// Latency returns the plan's latency distribution.
func (p *FaultPlan) Latency() Latency {
	if p == nil {
		return Latency{}
	}
	return p.latency
}

// ReplyDelay is the random latency of attempt a's reply on its way back
// to the caller: zero unless the plan has a latency distribution. It
// depends on a's Seed, Call and N only. The runtime delays the object's
// answers by it (a result, the object's error, a duplicate refused); a
// link fault tells the caller without it.
func (p *FaultPlan) ReplyDelay(a Attempt) time.Duration {
	if p == nil {
		return 0
	}
	return p.choices.latency(p.latency, a, legReply)
}

// leg says which way a latency draw travels: each leg of each attempt has
// a draw of its own.
type leg uint64

const (
	legRequest  leg = 0x6c61745f72657175 // "lat_requ"
	legReply    leg = 0x6c61745f7265706c // "lat_repl"
	legToObject leg = 0x6c61745f77736f62 // "lat_wsob": a WebSocket message to the object
	legToClient leg = 0x6c61745f7773636c // "lat_wscl": a WebSocket message to its client
)

// MessageDelay is the random latency of message n (from 1) of WebSocket
// conn on its way to the object (toObject) or to its client: zero unless
// the plan has a latency distribution. It depends on seed, conn, n and the
// way only, apart from every other draw. The runtime keeps each way of a
// socket in order (rule W5), so latency reorders messages across sockets,
// never within one.
func (p *FaultPlan) MessageDelay(seed uint64, conn, n int, toObject bool) time.Duration {
	if p == nil {
		return 0
	}
	which := legToClient
	if toObject {
		which = legToObject
	}
	return p.latency.draw(Attempt{Seed: seed, Call: conn, N: n}, which)
}

// draw is the latency of one leg of attempt a: a hash of the seed, the
// call, the attempt and the leg, apart from the fault draws (Draw), which
// it leaves alone: a shrunk fault set replays with the seed's latencies.
func (l Latency) draw(a Attempt, which leg) time.Duration {
	if !l.On() {
		return 0
	}
	x := splitmix.Hash(splitmix.Hash(a.Seed^uint64(which)) ^ uint64(a.Call)<<8 ^ uint64(a.N))
	return l.quantile(int64(x>>44) % latencyScale)
}

// latencyScale is the resolution of a latency draw: its quantile is a
// whole number in [0, latencyScale).
const latencyScale = 1 << 20

// quantile is the latency at quantile u/latencyScale of l.
func (l Latency) quantile(u int64) time.Duration {
	const scale = latencyScale
	p50, p99 := int64(l.P50/time.Microsecond), int64(l.P99/time.Microsecond)
	var us int64
	switch {
	case u < scale/2:
		us = p50 * u / (scale / 2)
	case u < scale*99/100:
		lo := int64(scale / 2)
		us = p50 + (p99-p50)*(u-lo)/(scale*99/100-lo)
	default:
		lo := int64(scale * 99 / 100)
		us = p99 + p99*(u-lo)/(scale-lo)
	}
	return time.Duration(us) * time.Microsecond
}

// ParseLatency reads a distribution as Latency.String writes it:
// "p50=5ms,p99=200ms" (p50 may be left out: 0), or "off".
func ParseLatency(s string) (Latency, error) {
	var l Latency
	if s == "off" {
		return l, nil
	}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || (k != "p50" && k != "p99") {
			return Latency{}, fmt.Errorf("%w: latency %s: want p50=DURATION,p99=DURATION, such as p50=5ms,p99=200ms, or off", ErrInvalid, strconv.Quote(part))
		}
		if seen[k] {
			return Latency{}, fmt.Errorf("%w: latency %s given twice", ErrInvalid, k)
		}
		seen[k] = true
		d, err := time.ParseDuration(v)
		if err != nil {
			return Latency{}, fmt.Errorf("%w: latency %s=%s: not a duration, such as 5ms", ErrInvalid, k, strconv.Quote(v))
		}
		if k == "p50" {
			l.P50 = d
		} else {
			l.P99 = d
		}
	}
	if !seen["p99"] {
		return Latency{}, fmt.Errorf("%w: latency %s: p99 is missing (p99=0 or off turns latency off)", ErrInvalid, strconv.Quote(s))
	}
	return l, l.Validate()
}
