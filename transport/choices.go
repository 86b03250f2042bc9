package transport

import (
	"sync"
	"time"
)

// Choices is a decision source for a fault plan (FaultPlan.WithChoices):
// the bytes of a fuzzer's input, read one byte per decision in the order
// the run makes its decisions, in place of the seed's hash draws. With
// them a coverage-guided fuzzer (go test -fuzz) chooses the faults and
// latencies of a run, and the choice is prefix-stable: decision i reads
// byte i, so editing one byte changes one decision (and what follows from
// it), and appending bytes only decides what the seed decided before.
// Once the bytes run out, every later decision is the seed's own draw
// (Draw and the latency hash), as a plan without choices makes it.
//
// The decisions of an attempt, each read when the run makes it:
//
//   - its fault, when the plan draws one (a random rate is set and no rule
//     gives the attempt a fault): byte b is the uniform number (255-b)/256
//     against the rates, so byte 0 delivers and the highest bytes pick the
//     faults, in fault order (byte 255 picks the first fault the rates
//     name; with rates of 4% each, ten or eleven byte values pick each);
//   - its latency on the way to the object, when the plan has a latency
//     distribution: byte b is the quantile b/256 (0 adds none, 128 the
//     median, 254 and 255 the 1% tail);
//   - the latency of its reply, likewise, when the reply leaves the
//     object (FaultPlan.ReplyDelay): later, after other attempts'
//     decisions, in the run's order.
//
// A run consumes its choices: make a fresh Choices (NewChoices, or Replay
// of one that ran) for each run. Choices is safe for concurrent use, but
// the bytes go to decisions in the order they are asked for, which only a
// deterministic run keeps.
type Choices struct {
	mu   sync.Mutex
	data []byte
	next int
	// keyed, when not nil, replaces the bytes: the latencies an earlier run
	// chose, by call and attempt (Replay).
	keyed map[choiceKey]time.Duration
	// chose is what this run chose from its bytes, by call and attempt.
	chose map[choiceKey]time.Duration
}

// choiceKey names one latency decision: the attempt and its leg.
type choiceKey struct {
	call, n int
	leg     leg
}

// NewChoices returns the decision source that reads data, one byte per
// decision. Empty data decides nothing: the seed draws every decision.
func NewChoices(data []byte) *Choices {
	return &Choices{data: append([]byte(nil), data...), chose: map[choiceKey]time.Duration{}}
}

// Used is how many bytes the run has read so far.
func (c *Choices) Used() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

// Replay returns a fresh source that gives each attempt the latencies c
// chose for it from its bytes, by call and attempt number, and leaves
// every other decision (the faults, and the latencies of attempts c did
// not choose) to the seed. It is how a shrunk fault set (rules naming
// calls and attempts) replays with the latencies of the run it came from,
// as a seed's shrunk replay keeps the seed's latencies.
func (c *Choices) Replay() *Choices {
	c.mu.Lock()
	defer c.mu.Unlock()
	keyed := make(map[choiceKey]time.Duration, len(c.chose))
	for k, d := range c.chose {
		keyed[k] = d
	}
	return &Choices{keyed: keyed}
}

// take returns the next byte, or false when the bytes have run out.
func (c *Choices) take() (byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keyed != nil || c.next >= len(c.data) {
		return 0, false
	}
	b := c.data[c.next]
	c.next++
	return b, true
}

// uniform is the number in [0, 1) that attempt a's fault is drawn from.
func (c *Choices) uniform(a Attempt) float64 {
	if c != nil {
		if b, ok := c.take(); ok {
			return float64(255-b) / 256
		}
	}
	return Draw(a.Seed, a.Call, a.N)
}

// latency is the latency of one leg of attempt a under l.
func (c *Choices) latency(l Latency, a Attempt, which leg) time.Duration {
	if !l.On() {
		return 0
	}
	if c == nil {
		return l.draw(a, which)
	}
	k := choiceKey{call: a.Call, n: a.N, leg: which}
	if c.keyed != nil {
		if d, ok := c.keyed[k]; ok {
			return d
		}
		return l.draw(a, which)
	}
	b, ok := c.take()
	if !ok {
		return l.draw(a, which)
	}
	d := l.quantile(int64(b) << 12)
	c.mu.Lock()
	c.chose[k] = d
	c.mu.Unlock()
	return d
}

// WithChoices returns a copy of p whose random decisions (faults at the
// random rates, latencies) read c first (see Choices); nil c takes them
// all from the seed again.
func (p *FaultPlan) WithChoices(c *Choices) *FaultPlan {
	out := p.WithRandom(nil)
	out.choices = c
	return out
}
