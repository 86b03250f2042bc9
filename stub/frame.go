package stub

// A call in flight: its frame (one request identity for all its attempts,
// rule S5), each attempt sent through the Conn and judged by decide, and
// how the call ends: finished with its outcome, breaking the stub (rule
// L2), or given up at its deadline (rule S9).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/transport"
)

// frame is what a call needs only while it runs, in one allocation, which
// the stub keeps for its next call.
type frame struct {
	s   *Stub
	rec *wire.Call
	req wire.Request
	n   int // the attempt being made
	// kept: an attempt failed so that it may have reached the object: the
	// request keeps its identity for good (S5). fresh: the last attempt
	// is known not to have reached it, and neither did any before it: a
	// retry takes a new identity.
	kept, fresh bool
	closed      bool // the runtime closed while an attempt waited
}

// send makes attempt n of the frame's call and waits for its reply (see
// Conn.RoundTrip): a retry with the request's body rewound, and a new
// request identity after attempts known not to have reached the object
// (S5). The error is a body that could not be rewound (nothing was sent)
// or, with fr.closed set, the runtime's closing.
func (fr *frame) send(ctx context.Context, n int, hreq *http.Request, deadline time.Duration) (*wire.Attempt, wire.Reply, error) {
	s, rec := fr.s, fr.rec
	if fr.fresh { // S5: the last attempt never reached the object, nor did any before it
		fr.renew()
	}
	a := rec.NewAttempt(s.conn.Now())
	out := wire.Send{Call: rec, Rec: a, Req: fr.req, N: n, Deadline: deadline}
	if hreq != nil {
		out.Body = hreq.Body
		if n > 1 && hreq.GetBody != nil {
			body, err := hreq.GetBody()
			if err != nil {
				return nil, wire.Reply{}, fmt.Errorf("stub: fetch: rewinding the body for attempt %d: %w", n, err)
			}
			out.Body = body
		}
	}
	fr.n = n
	rep, err := s.conn.RoundTrip(ctx, out) // by value: nothing of it escapes
	fr.closed = err != nil
	return a, rep, err
}

// judge records how attempt a ended, as its reply says, and returns its
// error, nil when it succeeded or was abandoned (the caller stopped
// waiting first).
func (fr *frame) judge(ctx context.Context, a *wire.Attempt, rep *wire.Reply) *Error {
	rec := fr.rec
	a.Extend(fr.s.conn.Now())
	switch {
	case !rep.Answered: // S9: it never arrives, or its turn sees ctx cancelled
		a.Cancelled = true
		rec.SetAttemptErr(a, errDeadline)
		if err := ctx.Err(); err != nil {
			rec.SetAttemptErr(a, err)
		}
	case rep.Kind != wire.FailNone:
		fr.identity(rep)       // the next attempt's (S5)
		e := newError(fr, rep) // the caller gets a copy, if it gets e (finish)
		rec.SetAttemptErr(a, e)
		return e
	}
	return nil
}

// blamed returns the error a call that ends returns, as decide blamed it:
// the first attempt's error, the last one's, or the caller's
// cancellation after n attempts.
func (s *Stub) blamed(ctx context.Context, b blame, method string, first, last *Error, n int) error {
	switch b {
	case blameLast:
		return last
	case blameCancelled:
		return s.cancelled(ctx, method, first, n)
	}
	return first
}

// identity notes how an attempt that failed with rep bears on the
// identity of the next (rule S5, as workerd's actor-call-retry-test.c++:
// "not-delivered actor calls retry with a new token", "ambiguous actor
// calls retry with the same token"): after a failure known not to have
// reached the object a retry takes a new one, unless an earlier attempt
// may have reached it; once one may have, every later attempt keeps its
// identity.
func (fr *frame) identity(rep *wire.Reply) {
	if notReached(rep.Kind, rep.Fault) && !fr.kept {
		fr.fresh = true
		return
	}
	fr.kept, fr.fresh = true, false
}

// renew draws the request's new identity for its next attempt (S5). The
// object never saw the old one, so no duplicate check can miss (S6).
func (fr *frame) renew() {
	id := fr.s.conn.NewRequestID()
	fr.rec.Renew(id)
	fr.req.ID = id
	fr.fresh = false
}

// finish closes the call's record and returns the call's result.
func (fr *frame) finish(outcome transport.Outcome, v any, resp *http.Response, err error) (any, *http.Response, error) {
	rec := fr.rec
	rec.End = fr.s.conn.Now()
	rec.Outcome = outcome
	rec.SetErr(err)
	err = snapshot(err) // the caller's own: changing it cannot change the trace
	if err == nil && v != nil {
		rec.Result = v
		if !clone.Immutable(v) { // the caller gets v and may change it
			rec.Result, _, _ = clone.Copy(v, refs) // cannot fail: the host copied v under this policy
		}
	}
	rec.Finished = true
	fr.s.conn.End(rec)
	if err != nil && breaks(outcome, err) {
		fr.s.breakLine(err)
	}
	s := fr.s
	*fr = frame{s: s}
	s.spare.Put(fr)
	return v, resp, err
}

// breaks reports whether a call that ended with outcome and err breaks
// its stub (rule L2): any failure of a sent call except the object's own
// answer (an error its code returned or panicked, flagged Remote, or a
// setup error its host gave: no such method, bad arguments, a constructor
// that failed), a call its caller cancelled, and a call refused because
// the stub was broken already.
func breaks(outcome transport.Outcome, err error) bool {
	switch outcome {
	case transport.OutcomeCancelled, transport.OutcomeBrokenStub:
		return false
	}
	e, ok := err.(*Error)
	return !ok || (e.kind != wire.FailRemote && e.kind != wire.FailSetup)
}

// breakLine breaks the stub with err (rule L2): the first attempts still
// waiting on its line fail at once with err and never arrive.
func (s *Stub) breakLine(err error) {
	if s.broken != nil {
		return
	}
	s.broken = snapshot(err) // the stub's own: the caller's copy may be changed
	s.conn.Break(s.broken)
}

// refused is the error of a call of method on the broken stub (rule L2):
// flagged Broken, wrapping a copy of the error that broke it.
func (s *Stub) refused(method string) error {
	e := brokenError(method, snapshot(s.broken))
	if e.Namespace == "" {
		e.Namespace, e.Object = s.target.Namespace, s.target.Object
	}
	return e
}

// snapshot copies a *Error for a record, so that a caller changing the
// error it got cannot change the trace; records render it when read. The
// copy of an object's error it carries is copied too (remoteError.own).
func snapshot(err error) error {
	if e, ok := err.(*Error); ok {
		cp := *e
		if r, ok := e.cause.(*remoteError); ok {
			cp.cause = r.own()
		}
		return &cp
	}
	return err
}

// errDeadline is recorded for a retry cancelled at the call's deadline.
var errDeadline = errors.New("cancelled at the call's deadline")

// cancelled is the error of a call stopped by its caller's context (S14).
// It wraps the context's error.
func (s *Stub) cancelled(ctx context.Context, method string, first *Error, attempts int) error {
	e := &Error{Namespace: s.target.Namespace, Object: s.target.Object, Method: method, Attempt: attempts}
	e.Msg = fmt.Sprintf("call cancelled before its first attempt: %v", ctx.Err())
	if first != nil {
		e.Fault = first.Fault
		e.Msg = fmt.Sprintf("call cancelled after %d attempt(s): %v; first error: %s", attempts, ctx.Err(), first.Msg)
	}
	e.cause = ctx.Err()
	return e
}

// abandon records a call that never made an attempt (a call pipelined on
// a failed call) and returns err.
func (s *Stub) abandon(method string, err error) error {
	rec := s.conn.NewCall()
	rec.Site, rec.ID, rec.Subrequests = s.site(method), s.conn.NewRequestID(), 1
	if s.conn.Begin(rec) != nil {
		return err // past MaxCalls: not recorded, as no call is
	}
	rec.End = rec.Start
	rec.Outcome = transport.OutcomeCancelled
	rec.SetErr(err)
	rec.Finished = true
	s.conn.End(rec)
	return err
}
