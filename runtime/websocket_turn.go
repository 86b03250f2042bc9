package runtime

// A socket's events as turns (rule W2): each client message or close is
// one turn through the object's input gate, in the order the client sent
// them, on a task of the socket's; the handler's failure is an event, not
// a crash.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/turn"
	"github.com/dosim/dosim/object"
)

// run starts the task that runs the socket's events, unless one runs. A
// replay runs only the turns it is given (replayWebSocket).
func (s *socket) run() {
	if s.running || len(s.events) == 0 || s.h.ns.r.replay != nil {
		return
	}
	s.running = true
	wt := &wsTurn{h: s.h, s: s}
	s.h.ns.r.k.Go(context.Background(), "websocket "+s.label(), wt.run)
}

// wsTurn is attached to the task running a socket's events (its
// sched.Work): each event is one turn through the object's input gate.
type wsTurn struct {
	h     *host
	s     *socket
	holds int32
	log   *turnLog
}

var (
	_ sched.Work               = (*wsTurn)(nil)
	_ turn.GateHolder          = (*wsTurn)(nil)
	_ turn.Turn[*object.State] = (*wsTurn)(nil)
)

// TurnState gives object code running in the turn its State.
func (wt *wsTurn) TurnState() *object.State { return wt.h.state }

// String names the turn in deadlock reports.
func (wt *wsTurn) String() string {
	return fmt.Sprintf("%s/%s websocket %s", wt.h.ns.name, wt.h.target.Object, wt.s.label())
}

// Leave lets the gate go for a yielding wait (sched.Work).
func (wt *wsTurn) Leave(t *sched.Task) bool { return wt.h.leaveFor(t, wt.holds, wt.log) }

// Return takes the gate back after the wait (sched.Work).
func (wt *wsTurn) Return(t *sched.Task) { wt.h.returnFor(t, wt.log) }

// HoldGate runs fn with the gate kept closed (turn.GateHolder).
func (wt *wsTurn) HoldGate(fn func() error) error { return holdGate(&wt.holds, fn) }

// ReplayCall answers a call out of a replayed turn (see turnInfo's).
func (wt *wsTurn) ReplayCall(namespace, name, method string, args []any) (any, error, bool) {
	return wt.h.ns.r.replayCall(namespace, name, method, args)
}

func (wt *wsTurn) ofObject() (*host, *turnLog) { return wt.h, wt.log }

// run runs the socket's events in order, one turn each.
func (wt *wsTurn) run(ctx context.Context) {
	s := wt.s
	t := sched.FromContext(ctx)
	t.SetWork(wt)
	defer func() { s.running = false }()
	for len(s.events) > 0 {
		ev := s.events[0]
		s.events = s.events[1:]
		if s.serverClosed && !ev.close {
			continue // the object closed it: no message reaches it any more
		}
		wt.one(ctx, t, ev)
	}
}

// one runs one event's turn: the handler of a (re)built instance (rule
// W4: a hibernated object's constructor runs again), through the gate.
func (wt *wsTurn) one(ctx context.Context, t *sched.Task, ev wsEvent) {
	s, h := wt.s, wt.h
	h.gate.Acquire(t, "waiting for the object's input gate")
	defer h.gate.Release()
	h.ws.turns++ // the object is busy: it is not evicted meanwhile (busy)
	defer func() {
		h.ws.turns--
		h.active() // rule L5: the idle time runs from the end of the turn
	}()
	if hs := h.ns.r.hist; hs != nil {
		wt.log = hs.begin(h, TurnWebSocket)
		wt.log.WebSocket = s.eventOf(ev)
		defer func() { hs.end(wt.log); wt.log = nil }()
	}
	defer h.confirmWrites() // rule L7: the turn's completion is a release point
	kind := object.EventWebSocketMessage
	if ev.close {
		kind = object.EventWebSocketClose
	}
	e := object.Event{Kind: kind, Name: s.label(), Note: ev.msg.String()}
	if ev.close {
		e.Note, e.Reason = "code="+strconv.Itoa(ev.code)+" by=client", ev.reason
		if ev.unclean {
			e.Note = "code=" + strconv.Itoa(ev.code) + " dropped"
		}
	}
	h.event(e)
	err := h.build()
	if err == nil {
		err = wt.deliver(ctx, ev)
	}
	if err != nil {
		h.event(object.Event{Kind: object.EventWebSocketError, Name: s.label(), Err: err.Error()})
	}
	if ev.close {
		s.leave()
	}
}

// deliver calls the instance's handler for ev, a panic returned as an
// error naming it.
func (wt *wsTurn) deliver(ctx context.Context, ev wsEvent) (err error) {
	h, s := wt.h, wt.s
	what := h.ns.name + "/" + h.target.Object + ".WebSocketMessage"
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s panicked: %v", what, p)
		}
	}()
	if ev.close {
		what = h.ns.name + "/" + h.target.Object + ".WebSocketClose"
		if c, ok := h.inst.(object.WebSocketCloser); ok {
			return readObjectErr(what, c.WebSocketClose(ctx, s.server, ev.code, ev.reason, !ev.unclean))
		}
		return nil
	}
	if m, ok := h.inst.(object.WebSocketMessager); ok {
		return readObjectErr(what, m.WebSocketMessage(ctx, s.server, ev.msg))
	}
	return nil
}
