package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dosim/dosim/object"
)

// ErrCircuitOpen is wrapped by the error Retry returns when its circuit
// breaker refuses an attempt (rule A7).
var ErrCircuitOpen = errors.New("circuit breaker is open")

// BreakerOptions configures a circuit breaker for Retry (rule A7, beyond
// the Agents SDK, opt-in). A breaker is shared by every Retry call, and
// every task retry, that names it, across all objects of the runtime: it
// stands for a dependency those calls share (a payment API, a mail server).
//
// It starts closed: attempts go through. Failures attempts (not calls)
// failing within Window open it: from then on an attempt is refused at
// once, and Retry returns an error wrapping ErrCircuitOpen without calling
// fn. After Cooldown the breaker is half-open: the next attempt goes
// through as a probe while others are still refused; if the probe succeeds
// the breaker closes, if it fails the breaker opens again for Cooldown.
// Times are virtual. Every call naming a breaker must give it the same
// settings.
type BreakerOptions struct {
	Name     string        // the breaker's name, shared by the calls that use it
	Failures int           // failed attempts within Window that open it (>= 1)
	Window   time.Duration // how far back failures count (> 0)
	Cooldown time.Duration // how long it stays open before a probe (> 0)
}

func (b *BreakerOptions) validate() error {
	if b == nil {
		return nil
	}
	switch {
	case b.Name == "":
		return optErr("breaker", *b, "retry.breaker.name must not be empty")
	case b.Failures < 1:
		return optErr("breaker", *b, fmt.Sprintf("retry.breaker %q: failures must be >= 1, got %d", b.Name, b.Failures))
	case b.Window <= 0:
		return optErr("breaker", *b, fmt.Sprintf("retry.breaker %q: window must be > 0, got %v", b.Name, b.Window))
	case b.Cooldown <= 0:
		return optErr("breaker", *b, fmt.Sprintf("retry.breaker %q: cooldown must be > 0, got %v", b.Name, b.Cooldown))
	}
	return nil
}

// BreakerState is the state of a circuit breaker.
type BreakerState uint8

// The states of a circuit breaker.
const (
	BreakerClosed   BreakerState = iota // attempts go through
	BreakerOpen                         // attempts are refused
	BreakerHalfOpen                     // one probe attempt goes through
)

// String returns "closed", "open" or "half-open".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("BreakerState(%d)", uint8(s))
}

// breaker is the shared state of one named circuit breaker.
type breaker struct {
	opts     BreakerOptions
	state    BreakerState
	fails    []time.Time // failures within the window, oldest first (closed)
	openedAt time.Time
	probing  bool // a half-open probe is in flight
}

const breakerKey = "agent.breaker\x00"

// breakerFor returns the runtime-wide breaker named by o, making it on
// first use.
func (s *turn) breakerFor(o BreakerOptions) (*breaker, error) {
	b, ok := s.host.Shared(breakerKey+o.Name, func() any { return &breaker{opts: o} }).(*breaker)
	if !ok {
		return nil, fmt.Errorf("agent.Retry: breaker %q: %w: no shared breaker", o.Name, ErrRetryOptions)
	}
	if b.opts != o {
		return nil, optErr("breaker", o, fmt.Sprintf("retry.breaker %q is already in use with other settings (%+v, not %+v)", o.Name, b.opts, o))
	}
	return b, nil
}

// Breaker returns the state of the runtime's circuit breaker called name,
// and false if no call has used it yet, or if ctx is not an object turn's
// (a method, an Alarm handler or a task callback). An open breaker whose
// cooldown has passed reports half-open: its next attempt is a probe.
func Breaker(ctx context.Context, name string) (BreakerState, bool) {
	s, err := turnOf(ctx, "agent.Breaker")
	if err != nil {
		return 0, false
	}
	b, ok := s.host.Shared(breakerKey+name, nil).(*breaker)
	if !ok {
		return 0, false
	}
	if b.state == BreakerOpen && !s.Now().Before(b.openedAt.Add(b.opts.Cooldown)) {
		return BreakerHalfOpen, true
	}
	return b.state, true
}

func (b *breaker) move(s *turn, to BreakerState) {
	b.state = to
	s.event(object.Event{Kind: object.EventBreaker, Name: b.opts.Name, State: fmt.Sprint(to)})
}

// allow asks whether an attempt may go; nil breakers allow everything.
func (b *breaker) allow(s *turn) error {
	if b == nil {
		return nil
	}
	now := s.Now()
	switch b.state {
	case BreakerOpen:
		until := b.openedAt.Add(b.opts.Cooldown)
		if now.Before(until) {
			return b.refuse(s, fmt.Sprintf("open until %s", until.Format(time.RFC3339Nano)))
		}
		b.move(s, BreakerHalfOpen)
		b.probing = true
	case BreakerHalfOpen:
		if b.probing {
			return b.refuse(s, "half-open, its probe is in flight")
		}
		b.probing = true
	}
	return nil
}

func (b *breaker) refuse(s *turn, why string) error {
	s.event(object.Event{Kind: object.EventBreakerRefused, Name: b.opts.Name, Note: why})
	return fmt.Errorf("%w: breaker %q is %s", ErrCircuitOpen, b.opts.Name, why)
}

// abandon tells the breaker that an allowed attempt was not made: a
// half-open breaker may let another probe through.
func (b *breaker) abandon() {
	if b.state == BreakerHalfOpen {
		b.probing = false
	}
}

// record tells the breaker how an allowed attempt went.
func (b *breaker) record(s *turn, err error) {
	if b == nil {
		return
	}
	now := s.Now()
	switch b.state {
	case BreakerHalfOpen:
		b.probing = false
		if err == nil {
			b.fails = b.fails[:0]
			b.move(s, BreakerClosed)
			return
		}
		b.openedAt = now
		b.move(s, BreakerOpen)
	case BreakerClosed:
		if err == nil {
			return
		}
		from := now.Add(-b.opts.Window)
		i := 0
		for i < len(b.fails) && !b.fails[i].After(from) {
			i++
		}
		b.fails = append(b.fails[:0], b.fails[i:]...)
		b.fails = append(b.fails, now)
		if len(b.fails) >= b.opts.Failures {
			b.fails = b.fails[:0]
			b.openedAt = now
			b.move(s, BreakerOpen)
		}
	}
	// Open: an attempt that started before the breaker opened changes nothing.
}
