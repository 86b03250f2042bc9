package stub

import (
	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/wire"
	"github.com/google/uuid"
)

// Conn is what a stub needs from the runtime that minted it
// (NewForRuntime). Package runtime implements it; its methods name types
// of dosim's internal packages, so that no other package can.
type Conn interface {
	// Kernel is the runtime's scheduler.
	Kernel() *sched.Kernel
	// NewRequestID draws a request identity from the seeded source.
	NewRequestID() uuid.UUID
	// NewCall returns a zeroed record for a call to fill in; the runtime
	// hands records out of slabs, so that a record costs no allocation of
	// its own.
	NewCall() *wire.Call
	// Begin registers a call record (Start and Seq are set by Begin); it
	// returns wire.ErrTooManyCalls, and registers nothing, past
	// wire.MaxCalls.
	Begin(c *wire.Call) error
	// End tells the runtime that a call has finished: no attempt of it will
	// be sent any more.
	End(c *wire.Call)
	// Send starts one attempt; it fires f.Done when the caller learns the
	// attempt's fate.
	Send(f *wire.Flight)
}
