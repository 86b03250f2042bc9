package stub

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/dosim/dosim/internal/wire"
	"github.com/google/uuid"
)

// Conn is a stub's connection to its object, as net/http's RoundTripper is
// a Client's: the stub keeps the policy (the retry loop, the request's
// identity, breaking, the caller's errors) and hands each attempt to its
// Conn, which carries it to the object in virtual time and brings back its
// reply. Package runtime implements it (Namespace.Get mints a stub over
// one); its methods name dosim's internal records, so that no other
// package can.
type Conn interface {
	// Target names the object.
	Target() *wire.Target
	// Enter reports whether a call may start on ctx: nil when ctx is the
	// runtime's running task. replaying is true when ctx's task is an
	// object's turn that another runtime replays alone: Replay answers the
	// call then.
	Enter(ctx context.Context) (replaying bool, err error)
	// Replay answers a call made by a turn that another runtime replays
	// alone (runtime.Replay) from the turn's history; ok is false when
	// there is no answer.
	Replay(ctx context.Context, method string, args []any) (v any, err error, ok bool)
	// Now is the runtime's virtual time.
	Now() time.Duration
	// Rand is the runtime's seeded source.
	Rand() *rand.Rand
	// Sleep waits d of virtual time on the running task. It returns false
	// when ctx ended first, and the runtime's ErrClosed when it closed.
	Sleep(ctx context.Context, d time.Duration) (slept bool, err error)
	// InTask returns the runtime's ErrNotInTask when ctx carries no task.
	InTask(ctx context.Context) error
	// Go runs fn on a new task with ctx's values (ctx may be the context
	// of a task that has ended); wait blocks the running task until fn has
	// returned.
	Go(ctx context.Context, name string, fn func(context.Context)) (wait func() error)

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

	// RoundTrip sends one attempt and waits for its reply: the first
	// attempt whatever happens (rule S9), a retry until its deadline or
	// until ctx ends, after which the attempt is abandoned (Reply.Answered
	// false). The first attempts of a Conn travel in order on its line
	// (rule L1); a retry on a connection of its own. The error is the
	// runtime's ErrClosed when it closed meanwhile.
	RoundTrip(ctx context.Context, s wire.Send) (wire.Reply, error)
	// Break fails the first attempts waiting on the line, which never
	// arrive: their replies are of kind wire.FailBroken with err (rule L2).
	Break(err error)
	// Fork returns a connection of its own to the same object: a line of
	// its own (rules L1, L2).
	Fork() Conn
}
