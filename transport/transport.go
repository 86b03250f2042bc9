// Package transport is the simulated link between a stub and an object. It
// decides how each attempt of a call travels (whether the link delivers
// it, loses it on the way, loses it while the object runs, loses the
// reply, or fails in another way, and how much virtual latency it adds),
// says for each fault what it means (the stage at which it strikes,
// whether the caller can tell, whether it is retryable, and the words for
// it), and names how a call over the link ends (Outcome).
//
// The runtime carries attempts over the link and keeps the object's side
// (input gate, construction, duplicate table, turn); the stub decides
// retries from what this package says about a fault.
//
// A fault plan is a list of rules matched per attempt (the first matching
// rule wins, zero fields match anything), optionally composed with random
// fault rates drawn from the runtime's seeded source.
//
//	plan := transport.Plan(
//		transport.Rule{Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse},
//		transport.Rule{Method: "Get", Delay: 3 * time.Second},
//	).WithRandom(transport.Rates{transport.LoseRequest: 0.05})
package transport

import (
	"errors"
	"fmt"
	"github.com/dosim/dosim/internal/splitmix"
	"slices"
	"sort"
	"strings"
	"time"
)

// Attempt describes one attempt, as rules match it.
type Attempt struct {
	Namespace string
	Object    string // the object's name, or its id when it has none
	ObjectID  string // the id's 64 hex digits
	Method    string // "fetch" for Stub.Fetch
	N         int    // attempt number, from 1
	Call      int    // the call's sequence number in its runtime, from 1
	// Seed is the runtime's seed: a random fault is drawn from a hash of
	// it, the call and the attempt (see DecideAttempt).
	Seed uint64
}

// Rule matches attempts and says what the link does to them. Zero fields
// match anything.
type Rule struct {
	Namespace string
	Object    string // a name or 64-hex id
	Method    string
	Attempt   int // 1 is the first attempt; 0 matches any
	// Call, when not 0, matches only the runtime's Call-th call (in the
	// order calls start, from 1): how a shrunk fault set names the one call
	// a fault hit.
	Call  int
	Fault Fault
	// Delay is link latency before delivery, in virtual time.
	Delay time.Duration
	// Reason is why the Reset fault resets the object (rule L3); only
	// with Fault Reset, where NoReset means ResetCodeUpdate.
	Reason ResetReason
}

func (r Rule) matches(a Attempt) bool {
	return (r.Namespace == "" || r.Namespace == a.Namespace) &&
		(r.Object == "" || r.Object == a.Object || r.Object == a.ObjectID) &&
		(r.Method == "" || r.Method == a.Method) &&
		(r.Attempt == 0 || r.Attempt == a.N) &&
		(r.Call == 0 || r.Call == a.Call)
}

// Rates gives each fault the probability that a random draw picks it for
// an attempt. The rates of the attempt faults add up to at most 1; the
// rest delivers normally. A connection fault's rate (DropConnection) is
// per WebSocket message, drawn on its own, and counts apart.
type Rates map[Fault]float64

// OnConnection returns the rates of r's connection faults
// (Fault.OnConnection) alone, nil when it has none: what a run that
// replays a set of attempt faults as rules keeps of the seed's draws, as
// it keeps its latency.
func (r Rates) OnConnection() Rates {
	var out Rates
	for f, v := range r {
		if f.OnConnection() && v > 0 {
			if out == nil {
				out = Rates{}
			}
			out[f] = v
		}
	}
	return out
}

// FaultPlan is a set of rules and random rates. The zero value, and a nil
// *FaultPlan, inject no fault.
type FaultPlan struct {
	rules []Rule
	rates Rates
	// latency is the random link latency of every attempt and reply
	// (WithLatency); its zero value adds none.
	latency Latency
	// choices, when not nil, makes the random decisions from a fuzzer's
	// bytes before the seed's draws (WithChoices).
	choices *Choices
	// byCall lists, for each call that rules name (Rule.Call), the
	// positions of those rules; anyCall the positions of the rules that
	// name none. Both are in rule order, so the first matching rule still
	// wins, and an attempt looks at its own call's rules instead of every
	// rule of a long shrunk fault set. nil byCall: scan every rule.
	byCall  map[int][]int
	anyCall []int
	// namesObjects says a rule names an object (Rule.Object), which may be
	// its 64-hex-digit id: only then is an attempt's ObjectID worth making.
	namesObjects bool
	// draws are the random rates of attempt faults in fault order, made
	// once by WithRandom: every attempt draws against them, and sorting a
	// map's keys per attempt cost an explored seed 5% of its time.
	draws []draw
	// drop is DropConnection's rate: per WebSocket message.
	drop float64
}

// draw is one fault's random rate.
type draw struct {
	fault Fault
	rate  float64
}

// Plan returns a plan made of rules, matched in order.
func Plan(rules ...Rule) *FaultPlan {
	p := &FaultPlan{rules: append([]Rule(nil), rules...)}
	p.index()
	return p
}

// index fills byCall and anyCall when some rule names a call.
func (p *FaultPlan) index() {
	p.namesObjects = slices.ContainsFunc(p.rules, func(r Rule) bool { return r.Object != "" })
	p.byCall, p.anyCall = nil, nil
	if !slices.ContainsFunc(p.rules, func(r Rule) bool { return r.Call != 0 }) {
		return
	}
	p.byCall = map[int][]int{}
	for i, r := range p.rules {
		if r.Call != 0 {
			p.byCall[r.Call] = append(p.byCall[r.Call], i)
		} else {
			p.anyCall = append(p.anyCall, i)
		}
	}
}

// match returns the first rule that matches a.
func (p *FaultPlan) match(a Attempt) (Rule, bool) {
	if p.byCall == nil {
		for _, r := range p.rules {
			if r.matches(a) {
				return r, true
			}
		}
		return Rule{}, false
	}
	named, other := p.byCall[a.Call], p.anyCall
	for len(named) > 0 || len(other) > 0 {
		var i int
		if len(other) == 0 || (len(named) > 0 && named[0] < other[0]) {
			i, named = named[0], named[1:]
		} else {
			i, other = other[0], other[1:]
		}
		if p.rules[i].matches(a) {
			return p.rules[i], true
		}
	}
	return Rule{}, false
}

// Random returns a plan that draws a fault for each attempt at the given rates.
func Random(rates Rates) *FaultPlan { return Plan().WithRandom(rates) }

// WithRandom returns a copy of p that also draws random faults: when no
// rule matches an attempt, or the matching rule names no fault, a fault is
// drawn at the given rates (a matching rule's Delay still applies).
func (p *FaultPlan) WithRandom(rates Rates) *FaultPlan {
	out := &FaultPlan{rates: Rates{}}
	if p != nil {
		out.latency, out.choices = p.latency, p.choices
		out.rules = append(out.rules, p.rules...)
		for f, r := range p.rates {
			out.rates[f] = r
		}
	}
	for f, r := range rates {
		out.rates[f] = r
	}
	out.index()
	for _, f := range out.sortedRates() {
		if f.OnConnection() {
			continue
		}
		out.draws = append(out.draws, draw{fault: f, rate: out.rates[f]})
	}
	out.drop = out.rates[DropConnection]
	return out
}

// DropsConnection reports whether the WebSocket connection conn drops as
// its n-th message (from 1) is sent to the object (toObject) or to its
// client: a draw at DropConnection's rate from a hash of seed, conn, n
// and the way, apart from every other draw.
func (p *FaultPlan) DropsConnection(seed uint64, conn, n int, toObject bool) bool {
	if p == nil || p.drop <= 0 {
		return false
	}
	way := uint64(0x64726f705f636c69) // "drop_cli"
	if toObject {
		way = 0x64726f705f6f626a // "drop_obj"
	}
	x := splitmix.Hash(splitmix.Hash(seed^way) ^ uint64(conn)<<8 ^ uint64(n))
	return float64(x>>11)/(1<<53) < p.drop
}

// Draw is the uniform number in [0, 1) from which a random fault of
// attempt n of call number call, in a runtime with seed, is drawn: a
// SplitMix64 hash of the three.
func Draw(seed uint64, call, n int) float64 {
	x := splitmix.Hash(splitmix.Hash(seed^0x5851f42d4c957f2d) ^ uint64(call)<<8 ^ uint64(n))
	return float64(x>>11) / (1 << 53)
}

// Names reports whether the plan can give an attempt fault f: a rule
// names it or a random rate for it is above zero. A nil plan names none.
func (p *FaultPlan) Names(f Fault) bool {
	if p == nil {
		return false
	}
	if p.rates[f] > 0 {
		return true
	}
	return slices.ContainsFunc(p.rules, func(r Rule) bool { return r.Fault == f })
}

// NamesObjects reports whether a rule of the plan names an object, so that
// the attempts it matches need Attempt.ObjectID. A nil plan names none.
func (p *FaultPlan) NamesObjects() bool { return p != nil && p.namesObjects }

// Rules returns a copy of the plan's rules.
func (p *FaultPlan) Rules() []Rule {
	if p == nil {
		return nil
	}
	return append([]Rule(nil), p.rules...)
}

// ErrInvalid is wrapped by Validate's errors.
var ErrInvalid = errors.New("invalid fault plan")

// Validate says what is wrong with the plan, naming the rule and field.
func (p *FaultPlan) Validate() error {
	if p == nil {
		return nil
	}
	for i, r := range p.rules {
		switch {
		case r.Attempt < 0:
			return fmt.Errorf("%w: rule %d: Attempt is %d, must be >= 0 (0 matches any attempt)", ErrInvalid, i+1, r.Attempt)
		case r.Attempt > 11:
			return fmt.Errorf("%w: rule %d: Attempt is %d, at most 11 attempts are ever made (MaxRetries <= 10)", ErrInvalid, i+1, r.Attempt)
		case r.Call < 0:
			return fmt.Errorf("%w: rule %d: Call is %d, must be >= 0 (0 matches any call)", ErrInvalid, i+1, r.Call)
		case r.Delay < 0:
			return fmt.Errorf("%w: rule %d: Delay is %v, must be >= 0", ErrInvalid, i+1, r.Delay)
		case r.Fault >= numFaults:
			return fmt.Errorf("%w: rule %d: Fault is %v, allowed are %s", ErrInvalid, i+1, r.Fault, strings.Join(faultNames[:], ", "))
		case r.Fault.OnConnection():
			return fmt.Errorf("%w: rule %d: Fault %v strikes a WebSocket connection, not an attempt: give it a rate (per message) instead", ErrInvalid, i+1, r.Fault)
		case r.Reason >= ResetBlockFailed:
			return fmt.Errorf("%w: rule %d: Reason is %v, allowed are code-update, storage, memory-limit", ErrInvalid, i+1, r.Reason)
		case r.Reason != NoReset && r.Fault != Reset:
			return fmt.Errorf("%w: rule %d: Reason %v goes only with Fault %v, not %v", ErrInvalid, i+1, r.Reason, Reset, r.Fault)
		}
	}
	sum := 0.0
	for _, f := range p.sortedRates() {
		r := p.rates[f]
		if f == None || f >= numFaults {
			return fmt.Errorf("%w: random rate for %v: not a fault; allowed are %s", ErrInvalid, f, strings.Join(faultNames[1:], ", "))
		}
		if !(r >= 0 && r <= 1) {
			return fmt.Errorf("%w: random rate for %v is %v, must be between 0 and 1", ErrInvalid, f, r)
		}
		if !f.OnConnection() {
			sum += r
		}
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("%w: random rates add up to %v, must be at most 1", ErrInvalid, sum)
	}
	return p.latency.Validate()
}

func (p *FaultPlan) sortedRates() []Fault {
	fs := make([]Fault, 0, len(p.rates))
	for f := range p.rates {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	return fs
}

// Decide returns the fault and latency for attempt a.
func (p *FaultPlan) Decide(a Attempt) (Fault, time.Duration) {
	d := p.DecideAttempt(a)
	return d.Fault, d.Delay
}

// DecideAttempt is Decide with the reason of a Reset fault: the matching
// rule's Reason, or ResetCodeUpdate when the rule gives none or the fault
// was drawn at random.
//
// A random fault is drawn from a hash of the runtime's seed, the call's
// number and the attempt's (Draw), never from the runtime's seeded source:
// whether one attempt gets a fault depends on nothing else, so a run that
// replays some of a seed's faults as rules (the explorer's shrinking,
// rule C5) keeps every other draw of the seed (backoff jitter, the order
// of same-instant tasks) as it was.
func (p *FaultPlan) DecideAttempt(a Attempt) Decision {
	if p == nil {
		return Decision{}
	}
	var d Decision
	if r, ok := p.match(a); ok {
		d = Decision{Fault: r.Fault, Delay: r.Delay, Reason: r.Reason}
	}
	if d.Fault == None && len(p.rates) > 0 {
		u := p.choices.uniform(a) // Draw(a.Seed, a.Call, a.N) without choices
		acc := 0.0
		for _, dr := range p.draws {
			acc += dr.rate
			if u < acc {
				d.Fault = dr.fault
				break
			}
		}
	}
	d.Delay += p.choices.latency(p.latency, a, legRequest)
	switch {
	case d.Fault != Reset:
		d.Reason = NoReset
	case d.Reason == NoReset:
		d.Reason = ResetCodeUpdate
	}
	return d
}
