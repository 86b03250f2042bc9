package runtime

// A socket's wire: each way of a WebSocket connection carries its messages
// and its close in the order they were sent (rule W5: within one socket,
// order holds), each after the link's latency for it
// (transport.FaultPlan.MessageDelay), never before what was sent before
// it; so latency reorders messages across sockets only. A connection that
// drops (Disconnect, or the fault drop-connection as a message is sent)
// loses what is on its wire.

import (
	"fmt"
	"net/http"
	"time"

	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/transport"
)

// wsWire is one way of a socket's connection.
type wsWire struct {
	q    []wsArrival   // sent, not arrived, in order
	last time.Duration // when the last one sent arrives
	sent int           // how many were sent this way: their latency draws
}

// wsArrival is a message or close on a wire, and when it arrives.
type wsArrival struct {
	at time.Duration
	ev wsEvent
}

// post sends ev down w, to the object (toObject) or to the client. A
// message may meet the fault drop-connection on its way (rule W5): the
// connection drops and the message is lost with what else is on its
// wire.
func (s *socket) post(w *wsWire, toObject bool, ev wsEvent) {
	r := s.h.ns.r
	now := r.k.Now()
	w.sent++
	if !ev.close && r.faults.DropsConnection(r.seed, s.id, w.sent, toObject) {
		to := "to=client"
		if toObject {
			to = "to=object"
		}
		s.h.event(object.Event{Kind: object.EventWebSocketDrop, Name: s.label(), Note: to + " fault=" + transport.DropConnection.String()})
		s.drop()
		return
	}
	at := max(sched.AddTime(now, r.faults.MessageDelay(r.seed, s.id, w.sent, toObject)), w.last)
	w.last = at
	if at <= now && len(w.q) == 0 {
		s.arrive(toObject, ev)
		return
	}
	w.q = append(w.q, wsArrival{at: at, ev: ev})
	gen := s.gen
	r.k.After(at-now, func() { s.drain(w, toObject, gen) })
}

// drain delivers, in order, what on w has arrived, unless the connection
// dropped since it was sent (gen).
func (s *socket) drain(w *wsWire, toObject bool, gen int) {
	if gen != s.gen {
		return
	}
	now := s.h.ns.r.k.Now()
	for len(w.q) > 0 && w.q[0].at <= now {
		ev := w.q[0].ev
		w.q[0] = wsArrival{}
		w.q = w.q[1:]
		s.arrive(toObject, ev)
	}
}

// arrive is the moment ev reaches its end. At the object, a message equal
// to the auto-response's request is answered without a turn (rule W4);
// anything else is an event of the object's. At the client, a message
// waits in its inbox, and a close ends it.
func (s *socket) arrive(toObject bool, ev wsEvent) {
	if !toObject {
		if ev.close {
			s.closed = &object.CloseError{Code: ev.code, Reason: ev.reason}
			if !s.clientClosed { // the client's WebSocket answers the object's close
				s.clientClosed = true
				s.post(&s.up, true, ev)
			}
		} else {
			s.inbox = append(s.inbox, ev.msg)
		}
		s.wake()
		return
	}
	ws := s.h.ws
	if !ev.close && ws.hasAuto && !ev.msg.Binary && ev.msg.Text == ws.autoReq {
		s.autoAt, s.autoSent = s.h.ns.r.k.Now(), true
		s.post(&s.down, false, wsEvent{msg: object.Message{Text: ws.autoResp}})
		return
	}
	s.events = append(s.events, ev)
	s.run()
}

// droppedReason is the reason the platform gives the object's
// WebSocketClose for a connection that dropped (workerd's
// hibernation-manager.c++).
const droppedReason = "WebSocket disconnected without sending Close frame."

// Disconnect drops the connection without a close (object.WebSocket's):
// what is on the wire either way is lost; the client's Receive ends with
// code 1006; the object's WebSocketClose gets 1006, the platform's reason
// and wasClean false, unless its end was closed already.
func (s *socket) Disconnect(from *object.WebSocket) error {
	if from != s.client {
		return fmt.Errorf("%w: Disconnect is for the client end: the object closes a socket with Close", object.ErrWebSocket)
	}
	s.drop()
	return nil
}

// drop drops the connection (Disconnect, or the fault drop-connection).
func (s *socket) drop() {
	if s.dropped {
		return
	}
	s.dropped = true
	s.gen++
	s.up.q, s.down.q = nil, nil
	if s.closed == nil {
		s.closed = &object.CloseError{Code: 1006}
		s.wake()
	}
	s.clientClosed = true
	if !s.serverClosed {
		s.events = append(s.events, wsEvent{close: true, code: 1006, reason: droppedReason, unclean: true})
		s.run()
	}
}

// lostSocket drops the connection of the WebSocket a 101 response carries
// when the response never reaches its caller (its reply lost, discarded
// by the output gate, or arriving when nobody waits): the caller's end of
// the connection goes with it, so the object's end sees it drop, as
// workerd's hibernation manager sees a disconnected socket (rule W5).
func lostSocket(resp *http.Response) {
	if resp == nil {
		return
	}
	if b, ok := resp.Body.(socketBody); ok && b.s != nil && !b.s.delivered {
		_ = b.s.Disconnect(b.s.client)
	}
}
