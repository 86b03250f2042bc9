package object

import (
	"context"
	"time"

	"github.com/dosim/dosim/internal/wire"
)

// State is what the runtime gives an object instance: its id, its durable
// storage and the virtual clock. It is passed to the namespace's
// constructor; keep it in a field.
type State struct {
	id      ID
	storage *Storage
	host    wire.Host
	tasks   *taskIndex // in-memory order of the stored tasks; nil until used
}

// ID returns the object's id.
func (s *State) ID() ID { return s.id }

// Storage returns the object's durable storage. It survives a reset of the
// instance (in-memory fields do not).
func (s *State) Storage() *Storage { return s.storage }

// Sleep waits d of virtual time. While it sleeps, other requests queued for
// this object may run (rule O3). It returns the context's error if ctx is
// cancelled first.
func (s *State) Sleep(ctx context.Context, d time.Duration) error { return s.host.Sleep(ctx, d) }

// Now returns the virtual wall clock.
func (s *State) Now() time.Time { return s.host.Now() }

// Effect records a side effect that leaves the object (an email sent, a card
// charged) in the runtime's trace, so that a method that does it twice is
// visible even when its storage looks the same. The payload is copied.
func (s *State) Effect(ctx context.Context, kind string, payload any) error {
	return s.host.Effect(ctx, kind, payload)
}
