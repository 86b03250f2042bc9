package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// CallRecord is what happened to one call (rule D2). Times are virtual
// time since the runtime started.
type CallRecord struct {
	// RequestID is the call's request identity: its last attempt's, the
	// one every attempt that may have reached the object carried, and the
	// one its turns and effects name. Attempts before it that were known
	// not to have reached the object may have carried others (rule S5:
	// AttemptRecord.RequestID).
	RequestID string
	Namespace string
	Object    string // the object's name, or its hex id
	// By is the object whose turn made the call ("NAMESPACE/object": a
	// method, an alarm or a task calling another object), "" when the
	// driver made it (a test, a scenario's calls).
	By          string
	Method      string // "fetch" for Stub.Fetch
	Start       time.Duration
	End         time.Duration
	Subrequests int // always 1: retries are not subrequests (S13)
	// Args are copies of the call's arguments, as the stub sent them
	// (nil for Fetch): plain data, JSON-encodable, except values passed
	// by reference (a stub, an RPC target, a reader), which appear as
	// themselves.
	Args []any
	// Result is a copy of what the call returned: nil when it failed and
	// for Fetch (whose response is the caller's).
	Result any
	// OneShot says which value of the call went by reference, when one
	// did (rule S11): in its arguments, which makes the call one attempt
	// only, as "argument 2: value.Body is a reader (*strings.Reader)"; in
	// its result, as "result: value is a stub (*stub.Stub)", a stub that
	// never retries (S1). Both, joined by "; ". "" for plain data only.
	OneShot string
	// ObjectErr is the object's own error message (what its method
	// returned or panicked with) when the call failed with it; "" when
	// the call succeeded or failed for another reason (Err says which).
	ObjectErr string
	// MaxRetries and Timeout are the stub's retry limit and deadline
	// (rules S2, S9), as the call ran with them.
	MaxRetries int
	Timeout    time.Duration
	Outcome    transport.Outcome
	Err        string // the error the caller got, "" on success
	Attempts   []AttemptRecord
	// Began and Ended are logical timestamps: the order in which calls
	// started and ended, finer than virtual time, where many calls share an
	// instant. A call that began after another ended came after it in real
	// order; linearizability checks rely on it.
	Began, Ended uint64
}

// AttemptRecord is what happened to one attempt of a call (rule D2).
type AttemptRecord struct {
	N int // from 1
	// RequestID is the identity the attempt carried (rule S5). It
	// differs from the call's only for attempts known not to have
	// reached the object, after which the retry took a new identity.
	RequestID string
	Start     time.Duration
	End       time.Duration // to the end of the object's execution (D3)
	Fault     transport.Fault
	Delivered bool // reached the object
	Executed  bool // the method (or fetch handler) ran
	Rejected  bool // refused as a duplicate before user code ran (S6)
	Cancelled bool // the caller stopped waiting (deadline or context)
	// LostWrites counts the storage writes the attempt's turn made that
	// were lost: a write failed (the storage-write-fails fault) before they
	// were durable, and they vanished (rule L7).
	LostWrites int
	Err        string
}

// Executions counts the attempts whose method ran.
func (c CallRecord) Executions() int {
	n := 0
	for _, a := range c.Attempts {
		if a.Executed {
			n++
		}
	}
	return n
}

// LinkText says what the link did to the attempt: "delivered", "in
// flight" (not arrived yet), "cancelled in flight" (a retry the caller
// gave up on before it arrived, which never arrives, rule S9), or the
// fault's name, with ", cancelled" when the caller stopped waiting. The
// words are the link's: see transport.Fault.LinkText.
func (a AttemptRecord) LinkText() string { return a.Fault.LinkText(a.Delivered, a.Cancelled) }

// DidText says what the object did with the attempt: "executed, 2 writes
// lost" when a storage write failure took back writes it made (rule L7).
func (a AttemptRecord) DidText() string {
	switch {
	case a.Rejected:
		return "rejected as duplicate"
	case a.Executed && a.LostWrites == 1:
		return "executed, 1 write lost"
	case a.Executed && a.LostWrites > 1:
		return fmt.Sprintf("executed, %d writes lost", a.LostWrites)
	case a.Executed:
		return "executed"
	case a.Delivered:
		return "received, not run"
	}
	return "not reached"
}

// Rejections counts the attempts refused as duplicates.
func (c CallRecord) Rejections() int {
	n := 0
	for _, a := range c.Attempts {
		if a.Rejected {
			n++
		}
	}
	return n
}

// record is a call's record as a reader gets it: its own copy.
func record(c *wire.Call) CallRecord {
	id := c.ID.String()
	rec := CallRecord{
		RequestID:   id,
		Namespace:   c.Site.Target.Namespace,
		Object:      c.Site.Target.Object,
		Method:      c.Site.Method,
		Start:       c.Start,
		End:         c.End,
		Subrequests: int(c.Subrequests),
		ObjectErr:   objectErr(c.Err()),
		MaxRetries:  int(c.MaxRetries),
		Timeout:     c.Timeout(),
		Outcome:     c.Outcome,
		Err:         wire.Text(c.Err()),
		Attempts:    make([]AttemptRecord, c.NumAttempts()),
		Began:       uint64(c.Began),
		Ended:       uint64(c.Ended),
		By:          c.By(),
	}
	rec.Args, rec.Result, rec.OneShot = recordValues(c)
	for j := range rec.Attempts {
		a := c.Attempt(j)
		rec.Attempts[j] = AttemptRecord{
			N: int(a.N), RequestID: attemptID(c, a, id), Start: a.Start, End: a.End, Fault: a.Fault,
			Delivered: a.Delivered, Executed: a.Executed, Rejected: a.Rejected, Cancelled: a.Cancelled,
			LostWrites: c.LostWrites(a), Err: wire.Text(c.AttemptErr(a)),
		}
	}
	return rec
}

// attemptID is the request identity attempt a of c carried (rule S5), as
// text; id is the call's, which most attempts carry.
func attemptID(c *wire.Call, a *wire.Attempt, id string) string {
	if aid := c.AttemptID(a); aid != c.ID {
		return aid.String()
	}
	return id
}

// recordValues copies a call's arguments and result for a reader, and
// says which of their values went by reference (CallRecord.OneShot).
func recordValues(c *wire.Call) (args []any, result any, oneShot string) {
	var refs []string
	if in := c.Args(); len(in) > 0 {
		args = make([]any, len(in))
		for i, a := range in {
			var ref string
			args[i], ref = copyRef(a)
			if ref != "" {
				refs = append(refs, "argument "+strconv.Itoa(i+1)+": "+ref)
			}
		}
	}
	result, ref := copyRef(c.Result)
	if ref != "" {
		refs = append(refs, "result: "+ref)
	}
	return args, result, strings.Join(refs, "; ")
}

// copyRef is copyValue, with what in v went by reference ("" if nothing).
func copyRef(v any) (any, string) {
	if clone.Immutable(v) {
		return v, ""
	}
	cp, res, _ := clone.Copy(v, refs)
	return cp, res.Ref
}

// copyArgs gives a reader of the records its own copy of a call's
// arguments, so that changing it cannot change the trace.
func copyArgs(args []any) []any {
	if len(args) == 0 {
		return nil
	}
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = copyValue(a)
	}
	return out
}

// copyValue copies a recorded value for a reader (immutable values are
// not copied); it was copied under the stub's policy, so it copies again.
func copyValue(v any) any {
	if clone.Immutable(v) {
		return v
	}
	cp, _, _ := clone.Copy(v, refs)
	return cp
}

// Effect is a side effect an object recorded with State.Effect.
type Effect struct {
	At        time.Duration
	Namespace string
	Object    string
	Kind      string
	Payload   any
	RequestID string // the request whose turn recorded it ("" outside a request)
	Attempt   int
}

func (r *Runtime) effect(ctx context.Context, h *host, kind string, payload any) error {
	if kind == "" {
		return fmt.Errorf("State.Effect: kind must not be empty")
	}
	cp, _, err := clone.Copy(payload, nil)
	if err != nil {
		return fmt.Errorf("State.Effect(%q): payload: %w", kind, refs.Explain(payload, err))
	}
	if r.journaling {
		// An effect leaves the object as an outgoing request does: the
		// output gate holds it until the writes before it are durable, and
		// a write that fails there discards it (rule L7).
		from, goes, strike := r.callGate()
		if !goes {
			from.strike()
			return fmt.Errorf("State.Effect(%q): %w: %s", kind, object.ErrStorage, transport.ResetStorage.Message())
		}
		if strike {
			defer from.strike()
		}
	}
	e := Effect{At: r.k.Now(), Namespace: h.ns.name, Object: h.target.Object, Kind: kind, Payload: cp}
	if r.hist != nil {
		r.hist.noteOutside(r, h)
	}
	if t := sched.FromContext(ctx); t != nil {
		if ti, ok := t.Work().(*turnInfo); ok {
			e.RequestID = ti.f.Req.ID.String()
			e.Attempt = ti.f.N
		}
	}
	r.effects = append(r.effects, e)
	return nil
}

// objectErr is the object's own error message when err is the error of a
// call that failed with it (flagged Remote), "" otherwise. It is read from
// the recorded error, so that a call's record does not keep it twice.
func objectErr(err error) string {
	var e *stub.Error
	if errors.As(err, &e) && e.Remote {
		return e.Msg
	}
	return ""
}
