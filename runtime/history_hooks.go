package runtime

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/wire"
)

// Where the runtime's turns meet their history (history.go): each hook is
// a nil check when the runtime keeps none.

// beginRequest opens the log of the request turn about to run f's method.
func (h *host) beginRequest(f *flight) *turnLog {
	hs := h.ns.r.hist
	if hs == nil {
		return nil
	}
	tl := hs.begin(h, TurnRequest)
	tl.call, tl.Attempt = f.Call, f.N
	h.noteInstance(tl)
	return tl
}

// endRequest closes a request turn's log; a turn whose context was
// cancelled while it ran (its caller gave up, rule S9) is cut.
func (h *host) endRequest(ctx context.Context, tl *turnLog) {
	if tl == nil {
		return
	}
	if ctx.Err() != nil && tl.Cut == "" {
		tl.Cut = "cancelled"
	}
	h.ns.r.hist.end(tl)
}

// beginFetch opens the log of a fetch handler's turn, keeping what the
// handler reads of the request's body.
func (h *host) beginFetch(ctx context.Context, f *flight, req *http.Request) *turnLog {
	tl := h.beginRequest(f)
	if tl == nil {
		return nil
	}
	if ti, ok := sched.FromContext(ctx).Work().(*turnInfo); ok {
		ti.log = tl
	}
	tl.Fetch = &FetchExchange{Method: req.Method, URL: req.URL.String(), Header: req.Header.Clone()}
	req.Body = &teeBody{rc: req.Body, x: tl.Fetch}
	return tl
}

// endFetch closes a fetch turn's log with the handler's response.
func (h *host) endFetch(ctx context.Context, tl *turnLog, rec *httptest.ResponseRecorder) {
	if tl == nil {
		return
	}
	tl.Fetch.Status, tl.Fetch.RespHeader = rec.Code, rec.Header().Clone()
	tl.Fetch.RespBody = append([]byte(nil), rec.Body.Bytes()...)
	h.endRequest(ctx, tl)
}

// teeBody keeps what a fetch handler reads of its request's body.
type teeBody struct {
	rc io.ReadCloser
	x  *FetchExchange
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.x.Body = append(b.x.Body, p[:n]...)
	if err != nil && !errors.Is(err, io.EOF) && b.x.BodyErr == "" {
		b.x.BodyErr = err.Error()
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }

// beginLane opens the log of a lane turn of h; an alarm turn keeps the
// alarm as it found it.
func (h *host) beginLane(lt *laneTurn) {
	hs := h.ns.r.hist
	if hs == nil {
		return
	}
	kind := TurnSchedule
	switch lt.lane {
	case wire.LaneAlarm:
		kind = TurnAlarm
	case wire.LaneQueue:
		kind = TurnQueue
	}
	lt.log = hs.begin(h, kind)
	if kind == TurnAlarm {
		a := h.alarmState()
		lt.log.Alarm = &a
	}
}

// endLane closes a lane turn's log.
func (h *host) endLane(lt *laneTurn) {
	if lt.log != nil {
		h.ns.r.hist.end(lt.log)
	}
}

// noteShared marks the running turn of h as reading runtime-wide state.
func (r *Runtime) noteShared(h *host) {
	if r.replay != nil {
		r.replay.diverge("it read runtime-wide shared state (a circuit breaker)")
		return
	}
	if r.hist == nil {
		return
	}
	if tl := r.current(h); tl != nil {
		tl.Shared = true
	}
}

// noteLost marks the turn that made a lost write (rule L7).
func noteLost(by any) {
	switch t := by.(type) {
	case *turnInfo:
		if t.log != nil && t.log.Cut == "" {
			t.log.Cut = "writes lost"
		}
	case *laneTurn:
		if t.log != nil && t.log.Cut == "" {
			t.log.Cut = "writes lost"
		}
	case *wsTurn:
		if t.log != nil && t.log.Cut == "" {
			t.log.Cut = "writes lost"
		}
	}
}
