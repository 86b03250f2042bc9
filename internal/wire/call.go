package wire

import (
	"errors"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/dosim/dosim/transport"
	"github.com/google/uuid"
)

// MaxCalls is how many calls one runtime makes at most: a call's Seq is
// an int32, and its Began and Ended stamps (two per call) a uint32.
const MaxCalls = math.MaxInt32

// ErrTooManyCalls is stub.Conn.Begin's error for the call past MaxCalls.
var ErrTooManyCalls = errors.New("a runtime makes at most 2,147,483,647 calls: start a new runtime (runtime.New) for more")

// Target names the object a stub points at, for records and errors.
type Target struct {
	Namespace string
	Object    string // label: the name, or the hex id
}

// Request is one call, the same on every attempt (rule S5) but for its
// identity, which the stub renews after an attempt known not to have
// reached the object, until one may have (Call.Renew).
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
	FailBroken            // the stub broke while the attempt waited on its line (rule L2)
)

// Send is one attempt as a stub sends it (stub.Conn.RoundTrip).
type Send struct {
	Call *Call
	Rec  *Attempt // the attempt's record
	// Req is the request this attempt carries: the call's, with the
	// identity this attempt has (rule S5).
	Req  Request
	N    int           // the attempt's number, from 1
	Body io.ReadCloser // for fetch: this attempt's body
	// Deadline is when a retry's caller stops waiting for its reply (rule
	// S9). The first attempt's caller waits for its reply whatever happens.
	Deadline time.Duration
}

// Reply is how an attempt ended, as its caller learns it
// (stub.Conn.RoundTrip).
type Reply struct {
	// Answered: the caller learned the attempt's fate before it stopped
	// waiting (a retry's deadline, its context: rule S9). An attempt not
	// answered is abandoned: it never arrives, or its turn sees its context
	// cancelled; the rest of the reply is zero.
	Answered bool
	Value    any
	Resp     *http.Response
	Kind     FailKind
	Fault    transport.Fault
	// Reset is why the object was reset under the attempt (FailReset).
	Reset transport.ResetReason
	Err   error // the cause (the object's error, a setup error)
}

// Call is the runtime's record of one call, filled in by the stub and the
// host. A record is kept for every call (KeepAll), so it is laid out small
// (128 bytes, issue 14): what every call has sits in the struct, the first
// attempt inline; what only some calls have (a second attempt, an error,
// two or more arguments, lost writes) hangs off one pointer, nil for a
// one-attempt success.
type Call struct {
	Site *Site // the target and the method, shared with the stub's other calls of it
	// ID is the call's request identity: its last attempt's (see Renew),
	// the one every attempt that may have reached the object carried.
	ID uuid.UUID
	// Start and End are virtual times; Began and Ended order call starts
	// and ends across the runtime, finer than virtual time (many calls
	// share an instant).
	Start, End   time.Duration
	Began, Ended uint32 // at most 2*MaxCalls
	// Result is a copy of what the call returned (not the caller's); nil
	// on failure and for fetch.
	Result any
	// arg holds the stub's copy of a one-argument call's argument (see
	// SetArg, NewArgs).
	arg   [1]any
	first Attempt
	more  *callMore
	// The small fields last, packed.
	Seq int32
	// InFlight counts attempts sent and not yet arrived at the object (or
	// dropped by the link).
	InFlight   int16
	TimeoutMs  uint16 // the stub's deadline in ms (500..60000, rule S3)
	MaxRetries int8   // the stub's retry limit (0..10, rule S2)
	// Subrequests is what the call counts against the caller's limit:
	// 1, retries are not subrequests (S13).
	Subrequests int8
	nargs       uint8
	Outcome     transport.Outcome
	Finished    bool
}

// Site is where calls go: a stub's target and one method. A stub keeps
// one per method it calls, and its records share it.
type Site struct {
	Target *Target
	Method string
}

// callMore is the part of a record only some calls have: a second
// attempt and more, errors, lost writes. A call retried once needs it and
// nothing else: its second attempt and the first two errors sit inline.
type callMore struct {
	second Attempt
	rest   []*Attempt // the third attempt on
	errs   []error    // per attempt, by N-1: over errv for the first two
	errv   [2]error
	lost   []int32 // lost writes per attempt, by N-1 (rule L7)
	err    error   // the call's error
	// ids are the identities of the attempts made before the last Renew,
	// by N-1; a later attempt carries ID. nil for a call that never
	// renewed it.
	ids []uuid.UUID
	// by is who made the call when an object's turn made it ("NS/object"):
	// "" for the driver's calls.
	by string
}

// SetBy records that the object called by ("NAMESPACE/object") made the
// call, from one of its turns.
func (c *Call) SetBy(by string) { c.extra().by = by }

// By is the object that made the call ("NAMESPACE/object"), "" when the
// driver (the test, the scenario) made it.
func (c *Call) By() string {
	if c.more == nil {
		return ""
	}
	return c.more.by
}

func (c *Call) extra() *callMore {
	if c.more == nil {
		c.more = &callMore{}
		c.more.errs = c.more.errv[:0]
	}
	return c.more
}

// Timeout is the stub's deadline.
func (c *Call) Timeout() time.Duration { return time.Duration(c.TimeoutMs) * time.Millisecond }

// The arguments sit in the record's one slot (nargs says how): the
// argument of a call of one; a *[2]any or *[3]any for two or three (one
// allocation, the exact size); a *[]any for more.
const manyArgs = 255

// SetArg keeps v (the stub's copy, never handed to the object) as a
// one-argument call's argument and returns the arguments as the request
// sends them: a slice over the record's own slot, so that nothing is
// allocated.
func (c *Call) SetArg(v any) []any {
	c.nargs = 1
	c.arg[0] = v
	return c.arg[:]
}

// NewArgs makes room in the record for the n >= 2 arguments of a call and
// returns it for the stub to fill with its copies (never handed to the
// object); the request sends that slice.
func (c *Call) NewArgs(n int) []any {
	switch n {
	case 2:
		p := new([2]any)
		c.nargs, c.arg[0] = 2, p
		return p[:]
	case 3:
		p := new([3]any)
		c.nargs, c.arg[0] = 3, p
		return p[:]
	}
	args := make([]any, n)
	c.nargs, c.arg[0] = manyArgs, &args
	return args
}

// Args returns the call's arguments as recorded: nil for none and for
// fetch. The slice is the record's: a reader copies what it hands on.
func (c *Call) Args() []any {
	switch c.nargs {
	case 0:
		return nil
	case 1:
		return c.arg[:]
	case 2:
		return c.arg[0].(*[2]any)[:]
	case 3:
		return c.arg[0].(*[3]any)[:]
	}
	return *c.arg[0].(*[]any)
}

// Err is the call's error, nil on success; rendered only when records
// are read.
func (c *Call) Err() error {
	if c.more == nil {
		return nil
	}
	return c.more.err
}

// SetErr records the call's error.
func (c *Call) SetErr(err error) {
	if err == nil && c.more == nil {
		return
	}
	c.extra().err = err
}

// NumAttempts is how many attempts the call has made.
func (c *Call) NumAttempts() int {
	switch {
	case c.first.N == 0:
		return 0
	case c.more == nil || c.more.second.N == 0:
		return 1
	}
	return 2 + len(c.more.rest)
}

// Attempt returns the record of attempt i+1 (i < NumAttempts).
func (c *Call) Attempt(i int) *Attempt {
	switch i {
	case 0:
		return &c.first
	case 1:
		return &c.more.second
	}
	return c.more.rest[i-2]
}

// NewAttempt records the start of the next attempt and returns its record.
func (c *Call) NewAttempt(start time.Duration) *Attempt {
	n := c.NumAttempts()
	var a *Attempt
	switch n {
	case 0:
		a = &c.first
	case 1:
		a = &c.extra().second
	default:
		a = &Attempt{}
		c.more.rest = append(c.more.rest, a)
	}
	*a = Attempt{N: uint8(n + 1), Start: start}
	return a
}

// Renew gives the call a new request identity, id, from its next attempt
// on (rule S5: after an attempt known not to have reached the object);
// the attempts made so far keep the identity they carried (AttemptID).
func (c *Call) Renew(id uuid.UUID) {
	m := c.extra()
	for len(m.ids) < c.NumAttempts() {
		m.ids = append(m.ids, c.ID)
	}
	c.ID = id
}

// AttemptID is the request identity attempt a carried.
func (c *Call) AttemptID(a *Attempt) uuid.UUID {
	if c.more != nil && int(a.N) <= len(c.more.ids) {
		return c.more.ids[a.N-1]
	}
	return c.ID
}

// AttemptErr is attempt a's error, nil if none.
func (c *Call) AttemptErr(a *Attempt) error {
	if c.more == nil || int(a.N) > len(c.more.errs) {
		return nil
	}
	return c.more.errs[a.N-1]
}

// SetAttemptErr records attempt a's error.
func (c *Call) SetAttemptErr(a *Attempt, err error) {
	if err == nil && c.more == nil {
		return
	}
	m := c.extra()
	for len(m.errs) < int(a.N) {
		m.errs = append(m.errs, nil)
	}
	m.errs[a.N-1] = err
}

// LostWrites counts the storage writes of attempt a's turn that a failed
// write made vanish (rule L7).
func (c *Call) LostWrites(a *Attempt) int {
	if c.more == nil || int(a.N) > len(c.more.lost) {
		return 0
	}
	return int(c.more.lost[a.N-1])
}

// LoseWrite counts one more lost write of attempt a's turn.
func (c *Call) LoseWrite(a *Attempt) {
	m := c.extra()
	for len(m.lost) < int(a.N) {
		m.lost = append(m.lost, 0)
	}
	m.lost[a.N-1]++
}

// Attempt is the record of one attempt (its error and lost writes are the
// call's: Call.AttemptErr, Call.LostWrites).
type Attempt struct {
	Start, End time.Duration
	N          uint8 // from 1 (at most 11 attempts, rule S2)
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
