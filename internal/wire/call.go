package wire

import (
	"io"
	"net/http"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/transport"
	"github.com/google/uuid"
)

// Conn is what a stub needs from the runtime that minted it.
type Conn interface {
	// Kernel is the runtime's scheduler.
	Kernel() *sched.Kernel
	// NewRequestID draws a request identity from the seeded source.
	NewRequestID() uuid.UUID
	// Begin registers a call record (Start and Seq are set by Begin).
	Begin(c *Call)
	// End tells the runtime that a call has finished: no attempt of it will
	// be sent any more.
	End(c *Call)
	// Send starts one attempt; it fires f.Done when the caller learns the
	// attempt's fate.
	Send(f *Flight)
}

// Target is what a stub points at.
type Target struct {
	Namespace string
	Object    string // label: the name, or the hex id
	// Host is the runtime's host for the object, opaque to stubs: a
	// *runtime.host (unexported), asserted only by package runtime.
	Host any
	// RPC is an RPC target living in Host, for by-reference stubs: an
	// object.Target, or nil for a stub of the object itself.
	RPC any
}

// Request is one call, the same on every attempt (rule S5).
type Request struct {
	ID     uuid.UUID
	Method string
	Args   []any         // already copied
	HTTP   *http.Request // for fetch
}

// FailKind classifies why an attempt failed.
type FailKind uint8

// The kinds of attempt failure.
const (
	FailNone     FailKind = iota
	FailLink              // the link's fault: see Flight.Fault
	FailRemote            // the object's code returned an error or panicked
	FailRejected          // a duplicate request identity, refused before user code
	FailReset             // the object was reset while the request ran (FailAfterDelivery, Reset, rule L3)
	FailSetup             // no such method, bad signature, bad arguments, construction failed
	FailClosed            // the runtime closed
	// FailResetQueued: the object was reset while the request waited at
	// its input gate: it never reached an instance (retryable, rule L3).
	FailResetQueued
	FailBroken // the stub broke while the attempt waited on its line (rule L2)
)

// Line is a stub's connection to its object, on which its calls' first
// attempts travel (rule L1). The runtime keeps Queue: the attempts sent on
// the line that have not arrived yet, in the order they were sent, each
// arriving no earlier than the one before it. A retry travels on a fresh
// connection of its own (Flight.Line nil).
type Line struct {
	Queue []Queued
	// Reserve is set while the line delivers an attempt due at the same
	// instant as the one before it: its turn takes its place at the
	// object's gate at once, so that the two keep their order.
	Reserve bool
}

// Queued is an attempt waiting on a Line, and when it arrives.
type Queued struct {
	F  *Flight
	At time.Duration
}

// Flight is one attempt in flight.
type Flight struct {
	Call   *Call
	Target *Target
	Req    *Request
	N      int
	Rec    *Attempt
	Body   io.ReadCloser // for fetch: this attempt's body
	Done   sched.Signal
	// Line is the stub's connection the attempt travels on (rule L1); nil
	// for a retry, which goes on a fresh connection.
	Line *Line

	// Outcome, set before Done fires.
	Value any
	Resp  *http.Response
	Kind  FailKind
	Fault transport.Fault
	// Reset is why the object was reset under the attempt (FailReset,
	// FailResetQueued; NoReset for FailAfterDelivery), and, set at send,
	// the reason of a Reset fault.
	Reset transport.ResetReason
	Err   error // the cause (object error, setup error)
	// Lost is set when the caller has stopped waiting (a retry cancelled
	// at the deadline or by the caller's context, rule S9). A lost attempt
	// that has not arrived never arrives; one already at the object has its
	// context cancelled through Cancel.
	Lost bool
	// Cancel, set by the host when it starts a turn for a retry on a task
	// of its own, cancels that turn's context. The stub calls it when it
	// marks the flight Lost.
	Cancel func()
}

// Abandon marks the flight lost (the caller stopped waiting) and cancels
// the context of its turn if one is under way (rule S9).
func (f *Flight) Abandon() {
	f.Lost = true
	if f.Cancel != nil {
		f.Cancel()
	}
}

// Call is the runtime's record of one call, filled in by the stub and the host.
type Call struct {
	Target *Target
	ID     uuid.UUID
	Method string
	// Start and End are virtual times; Began and Ended order call starts
	// and ends across the runtime, finer than virtual time (many calls
	// share an instant).
	Start, End   time.Duration
	Began, Ended uint64
	// Args are the stub's copies of the arguments (the request's; never
	// handed to the object, which gets its own per delivery); nil for
	// fetch.
	Args []any
	// Result is a copy of what the call returned (not the caller's); nil
	// on failure and for fetch.
	Result any
	// Timeout is the stub's deadline.
	Timeout  time.Duration
	Err      error // rendered only when records are read
	Attempts []*Attempt
	// The small fields last, packed (a record is kept for every call).
	Seq         int32
	Subrequests int32
	// InFlight counts attempts sent and not yet arrived at the object (or
	// dropped by the link).
	InFlight   int32
	MaxRetries int8 // the stub's retry limit (0..10, rule S2)
	Outcome    transport.Outcome
	Finished   bool
}

// Attempt is the record of one attempt.
type Attempt struct {
	Start, End time.Duration
	Err        error // rendered only when records are read
	N          int32
	// LostWrites counts the storage writes of the attempt's turn that a
	// failed write made vanish (rule L7).
	LostWrites int32
	Fault      transport.Fault
	Delivered  bool
	Executed   bool
	Rejected   bool
	Cancelled  bool
}

// Text renders an error for a record ("" for nil).
func Text(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Extend moves the attempt's End to now if now is later (rule D3: an
// attempt is recorded to the end of its execution).
func (a *Attempt) Extend(now time.Duration) {
	if now > a.End {
		a.End = now
	}
}

// MakeStubFunc is the type of MakeStub. Its real signature, in the types
// wire cannot name (package stub sits above it):
//
//	func(conn Conn, target *Target, retrying bool, opts []stub.Option) (*stub.Stub, error)
//
// An opts element that is not a stub.Option is an error, not a panic.
type MakeStubFunc func(conn Conn, target *Target, retrying bool, opts []any) (any, error)

// Hooks set by package stub's init.
var (
	// MakeStub builds a *stub.Stub for target (see MakeStubFunc).
	MakeStub MakeStubFunc
	// RefPolicy is the copy policy for arguments and results: stubs and RPC
	// targets travel by reference (a stub becomes a non-retrying stub).
	RefPolicy *clone.Policy
)
