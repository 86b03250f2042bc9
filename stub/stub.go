// Package stub is the caller's side of a call to a Durable-Object-style
// object: a Stub invokes methods (Call, CallAs), sends HTTP requests
// (Fetch) and starts pipelined calls (Start, Promise.Pipeline).
//
// A stub minted by Namespace.Get or GetByName retries a failed attempt as
// the Durable Objects runtime does (rules S1-S15 of dosim's design): only
// when the failure is retryable and the request never reached the object or
// the link broke so that arrival is unknown; with one request identity,
// which a retry renews only after attempts known not to have reached the
// object (S5); after a full-jitter backoff drawn from the runtime's seed
// (before retry n, uniform in [0, min(500ms·2^(n-1), 2s)]: MaxBackoff);
// never past its deadline, and never cancelling the first attempt. The
// object's host rejects an identity it has already seen unless the method is
// marked object.Retryable, so an unmarked method never runs twice because of
// a retry.
package stub

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/dosim/dosim/internal/ref"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/spare"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/transport"
)

// Stub is a reference to one object, through which calls travel.
//
// A stub is one connection to its object (rules L1, L2 of dosim's design):
//
//   - E-order (L1): the calls made through one stub reach the object in
//     the order they were made, even when the link delays an earlier one;
//     calls through different stubs have no order between them. Only a
//     call's first attempt travels on the stub's connection: a retry goes
//     on a fresh connection and may be overtaken by calls made later
//     through the same stub.
//   - Broken stub (L2): once a call through the stub has failed, after the
//     stub's own retries, with an error that did not come from the object's
//     code, the stub is broken. The calls queued behind it (sent, not yet
//     arrived) and every later call fail at once, without reaching the
//     object, with an *Error flagged Broken that wraps the error that broke
//     the stub and names its call; their records have outcome broken-stub.
//     The object's own answers do not break the stub: an error flagged
//     Remote (its code returned or panicked it, or it has no such method)
//     or a setup error from its host (bad arguments, a constructor that
//     failed).
//     Neither does a call stopped by its caller's context (outcome
//     cancelled), nor an argument refused before anything was sent. Link
//     faults, duplicate refusals, timeouts, Overloaded and resets do. Take a fresh stub from the namespace (Get,
//     GetByName) after such a failure: that is the platform's advice too.
//     Broken reports it.
//
// A stub that reaches you as a call's argument or result is a connection of
// its own: it starts unbroken and breaks by the same rule.
type Stub struct {
	mark                  // arrives as asRef across a call (the copy policy's ref.Arriver)
	conn     Conn         // the connection first attempts travel on (L1)
	target   *wire.Target // conn's
	retrying bool
	cfg      config
	broken   error            // the error that broke the stub, nil while it works (L2)
	spare    spare.One[frame] // the last call's frame, free for the next (see frame)
	sites    []*wire.Site
}

// maxSites is how many methods a stub keeps a Site for; a call of one more
// gets a Site of its own.
const maxSites = 16

// site returns the stub's Site for method, which its records share.
func (s *Stub) site(method string) *wire.Site {
	for _, st := range s.sites {
		if st.Method == method {
			return st
		}
	}
	st := &wire.Site{Target: s.target, Method: method}
	if len(s.sites) < maxSites {
		s.sites = append(s.sites, st)
	}
	return st
}

// Broken returns the error that broke the stub (rule L2), or nil while it
// works. Every call through a broken stub fails at once with this error.
func (s *Stub) Broken() error { return snapshot(s.broken) }

// Namespace returns the name of the namespace the stub's object belongs to.
func (s *Stub) Namespace() string { return s.target.Namespace }

// Object returns the object's name, or its hex id when it has none.
func (s *Stub) Object() string { return s.target.Object }

// Retries reports whether the stub retries failed attempts: true only for
// stubs minted by Namespace.Get and GetByName (rule S1).
func (s *Stub) Retries() bool { return s.retrying }

// MaxRetries returns the stub's retry limit.
func (s *Stub) MaxRetries() int { return s.cfg.maxRetries }

// Timeout returns the stub's retry deadline.
func (s *Stub) Timeout() time.Duration { return s.cfg.timeout }

// String names the stub's object, and says if it does not retry.
func (s *Stub) String() string {
	kind := "stub"
	if !s.retrying {
		kind = "stub (no retries)"
	}
	return fmt.Sprintf("%s %s/%s", kind, s.target.Namespace, s.target.Object)
}

// asRef returns the stub as it arrives on the other side of a call: the
// same object, never retrying (rule S1).
func (s *Stub) asRef() *Stub {
	c := *s
	c.retrying = false
	c.conn, c.broken, c.spare = s.conn.Fork(), nil, spare.One[frame]{} // a connection of its own (L1, L2); a frame of its own
	return marked(&c)
}

// mark makes a stub a ref.Arriver, under a name go doc does not show.
type mark = ref.Mark

// arrival is what a stub arrives as on the other side of a call (asRef),
// named "a stub": what the copy policy of arguments and results asks.
func arrival(s any) (any, string) { return s.(*Stub).asRef(), "a stub" }

// marked returns s with its Mark.
func marked(s *Stub) *Stub {
	s.mark = ref.NewMark(s, arrival)
	return s
}

var _ ref.Arriver = (*Stub)(nil)

// refs is the copy policy of arguments and results (object.CopyPolicy).
var refs = object.Hosting(seal.Key{}).CopyPolicy()

// New returns a stub whose calls travel on conn: one from Namespace.Get
// retries (rule S1), one that arrives as a call's result does not. Package
// runtime mints its stubs with it (see Conn).
func New(conn Conn, retrying bool, opts ...Option) (*Stub, error) {
	cfg := defaults()
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("stub option: nil")
		}
		if err := opt.apply(&cfg); err != nil {
			return nil, err
		}
	}
	return marked(&Stub{conn: conn, target: conn.Target(), retrying: retrying, cfg: cfg}), nil
}

// Call invokes method on the object with copies of args and returns a copy
// of its result. A method that returns an RPC target gives a *Stub (that
// never retries) instead. Arguments and results must be plain data (rule
// O5): an argument that is not (a func, a channel, an *os.File, a value
// that contains itself) is refused with its path before anything is sent,
// with an error wrapping object.ErrNotPlainData. A stub, an RPC target or
// an io.Reader goes by reference and makes the call one-shot (S11), which
// its record says (runtime.CallRecord.OneShot).
func (s *Stub) Call(ctx context.Context, method string, args ...any) (any, error) {
	v, _, err := s.do(ctx, method, args, nil, nil)
	return v, err
}

// CallAs calls method and converts its result to T.
func CallAs[T any](ctx context.Context, s *Stub, method string, args ...any) (T, error) {
	var zero T
	v, err := s.Call(ctx, method, args...)
	if err != nil {
		return zero, err
	}
	if t, ok := v.(T); ok {
		return t, nil
	}
	var out T
	if err := clone.Into(&out, v); err != nil {
		return zero, fmt.Errorf("stub: result of %s: %w: %w", method, ErrType, err)
	}
	return out, nil
}

// Fetch sends req to the object's ServeHTTP and returns its response. An
// HTTP error status is a successful call (rule S4). The request is retried
// only if its body can be replayed: nil, http.NoBody, or a body GetBody can
// rewind (rule S11).
func (s *Stub) Fetch(ctx context.Context, req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, errors.New("stub: Fetch: request is nil")
	}
	_, resp, err := s.do(ctx, "fetch", nil, req, nil)
	return resp, err
}

// replayed answers a call made by an object turn that another runtime
// replays alone (runtime.Replay, for the explorer's model): the call is not
// sent, its answer comes from the turn's history. A fetch cannot be
// answered so: it gets the replay's divergence error.
func (s *Stub) replayed(ctx context.Context, method string, args []any, hreq *http.Request) (any, error, bool) {
	if hreq != nil {
		method = "fetch"
	}
	// A copy, so that args does not escape through the interface call: a
	// call's variadic arguments stay on its caller's stack (a replay is
	// rare; every call would pay the allocation otherwise).
	return s.conn.Replay(ctx, method, slices.Clone(args))
}

// bodyReplayable reports whether every attempt can send the same body.
func bodyReplayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// callState is shared by a call and the promise that started it.
type callState struct {
	pipelined bool // a call was pipelined on its result: stop retrying (S12)
}

// do runs one call: the retry loop of rules S3-S14. It sends attempts,
// keeps their records, and asks decide what to do after each.
func (s *Stub) do(ctx context.Context, method string, args []any, hreq *http.Request, cs *callState) (any, *http.Response, error) {
	c := s.conn
	// A goroutine outside the simulation (started by a method, say) gets
	// runtime.ErrNotInTask here, before it touches anything.
	if replaying, err := c.Enter(ctx); err != nil {
		if replaying {
			if v, rerr, ok := s.replayed(ctx, method, args, hreq); ok {
				return v, nil, rerr
			}
		}
		return nil, nil, err
	}
	fr, replayable, err := s.begin(method, args, hreq)
	if err != nil {
		return nil, nil, err
	}
	rec := fr.rec
	if s.broken != nil { // L2: a broken stub sends nothing
		return fr.finish(transport.OutcomeBrokenStub, nil, nil, s.refused(method))
	}
	deadline := rec.Start + s.cfg.timeout
	if deadline < rec.Start { // saturated: a call near the end of virtual time
		deadline = math.MaxInt64
	}
	var first *Error
	if ctx.Err() != nil { // S14: no attempt starts after cancellation
		return fr.finish(transport.OutcomeCancelled, nil, nil, s.cancelled(ctx, method, nil, 0))
	}
	for n := 1; ; n++ {
		a, rep, err := fr.send(ctx, n, hreq, deadline)
		if err != nil {
			if fr.closed {
				return nil, nil, err
			}
			return fr.finish(transport.OutcomeNotReplayable, nil, nil, err)
		}
		if rep.Kind == wire.FailBroken { // L2: the stub broke while this one waited on its line
			a.Extend(c.Now())
			rec.SetAttemptErr(a, s.refused(method)) // the record's own copy
			return fr.finish(transport.OutcomeBrokenStub, nil, nil, s.refused(method))
		}
		e := fr.judge(ctx, a, &rep)
		if n == 1 {
			first = e
		}
		end := ended{n: n, stopped: !rep.Answered, kind: rep.Kind, replayable: replayable, maxRetries: s.cfg.maxRetries,
			now: c.Now(), deadline: deadline}
		if !rep.Answered || e != nil {
			end.retryable = e != nil && e.Retryable
			end.pipelined = cs != nil && cs.pipelined
			end.cancelled = ctx.Err() != nil
		}
		v := decide(end, c.Rand())
		if !v.retry {
			if v.blame == blameNone {
				return fr.finish(v.outcome, rep.Value, rep.Resp, nil)
			}
			return fr.finish(v.outcome, nil, nil, s.blamed(ctx, v.blame, method, first, e, n))
		}
		if slept, err := c.Sleep(ctx, v.sleep); err != nil {
			return nil, nil, err // the runtime closed
		} else if !slept {
			return fr.finish(transport.OutcomeCancelled, nil, nil, s.cancelled(ctx, method, first, n))
		}
		if cs != nil && cs.pipelined { // S12: pipelined during the backoff
			return fr.finish(transport.OutcomeNotReplayable, nil, nil, first)
		}
	}
}

// begin sets up a call: its frame (this stub's last one when nothing
// holds it any more), its record with copies of args, its request. It
// reports whether every attempt can send the same request (a body that
// can be rewound, no argument passed by reference).
func (s *Stub) begin(method string, args []any, hreq *http.Request) (fr *frame, replayable bool, err error) {
	fr = s.spare.Take() // the frame of this stub's last call
	if fr == nil {
		fr = &frame{s: s}
	}
	rec := s.conn.NewCall()
	fr.rec = rec
	var copied []any // never args itself, which stays on the caller's stack
	replayable = s.retrying
	if hreq != nil {
		replayable = replayable && bodyReplayable(hreq)
	} else if len(args) > 0 {
		// The copies live in the record: the request sends them and the
		// record keeps them (the object gets copies of its own per
		// delivery, so nothing changes them).
		if len(args) == 1 {
			copied = rec.SetArg(args[0]) // the record's own slot: no allocation
		} else {
			copied = rec.NewArgs(len(args))
		}
		for i, a := range args {
			v, res, err := clone.Copy(a, refs)
			if err != nil {
				return nil, false, fmt.Errorf("stub: %s argument %d: %w", method, i+1, err)
			}
			if res.Refs > 0 {
				replayable = false
			}
			copied[i] = v
		}
	}
	fr.req = wire.Request{ID: s.conn.NewRequestID(), Method: method, Args: copied, HTTP: hreq}
	rec.Site = s.site(method)
	rec.ID = fr.req.ID
	rec.Subrequests = 1 // retries are not subrequests (S13)
	rec.MaxRetries = int8(s.cfg.maxRetries)
	rec.TimeoutMs = uint16(s.cfg.timeout / time.Millisecond)
	if err := s.conn.Begin(rec); err != nil {
		return nil, false, fmt.Errorf("stub: %s: %w", method, err)
	}
	return fr, replayable, nil
}

// Connect opens a WebSocket to the object and returns its client end
// (rules W1-W5): req, a GET, is sent as a fetch asking for the upgrade
// (the Upgrade header is added when missing), retried as fetches are,
// and the object's 101 response carries the client end
// (object.WebSocketOf). Another status is an error wrapping
// object.ErrWebSocket, in the platform's words.
func (s *Stub) Connect(ctx context.Context, req *http.Request) (*object.WebSocket, error) {
	if req == nil {
		return nil, errors.New("stub: Connect: request is nil")
	}
	if req.Header.Get("Upgrade") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Connection", "Upgrade")
	}
	resp, err := s.Fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil, fmt.Errorf("stub: Connect: %w: %s", object.ErrWebSocket, fmt.Sprintf("TypeError: Failed to establish the WebSocket connection: expected server to reply with HTTP status code 101 (switching protocols), but received %d instead.", resp.StatusCode))
	}
	ws, ok := object.WebSocketOf(resp)
	if !ok {
		return nil, fmt.Errorf("stub: Connect: %w: the 101 response carries no WebSocket (answer with object.Upgrade)", object.ErrWebSocket)
	}
	return ws, nil
}
