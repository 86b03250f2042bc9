package runtime

// WebSockets (rules W1-W5), after the platform's WebSocket Hibernation
// API: the host keeps an object's accepted sockets, their tags and
// attachments beside its storage, so that they outlive the instance (an
// evicted object hibernates with its sockets open, W4). A client's
// message, or its close, is an event of the socket; each socket's events
// run in order, one turn each through the object's input gate (W2), on a
// task of the socket's (wsTurn). What the object sends waits in the
// client end's inbox until the client receives it.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/sched"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/object"
)

// sockets is an object's WebSocket state, its host's.
type sockets struct {
	open      []*socket // the accepted sockets still open, in the order accepted
	accepted  int       // how many were ever accepted: socket labels
	autoReq   string    // the auto-response pair (SetWebSocketAutoResponse)
	autoResp  string
	hasAuto   bool
	byHandler map[*object.WebSocket]*socket
	turns     int // WebSocket event turns under way
}

// socket is one accepted pair: the runtime's link between its ends.
type socket struct {
	h              *host
	n              int
	server, client *object.WebSocket
	tags           []string
	attachment     []byte
	autoAt         time.Duration
	autoSent       bool

	inbox  []object.Message // sent to the client, not yet received
	closed *object.CloseError
	wait   *sched.Signal // the client's Receive, waiting

	events       []wsEvent // the client's, arrived, waiting for their turns (W2)
	running      bool      // a task runs the events
	serverClosed bool      // the object's end is closed: it gets no more events
	clientClosed bool      // the client sent its close
	delivered    bool      // the 101 reply carrying the client end reached its caller

	id       int    // the runtime's number of the socket: its latency draws
	up, down wsWire // to the object, to the client (websocket_wire.go)
	dropped  bool   // the connection dropped without a close (Disconnect)
	gen      int    // counts drops: a wire's arrival of an earlier generation is lost
}

// wsEvent is a message or a close on its way, or, arrived, for the
// object's handler.
type wsEvent struct {
	msg     object.Message
	close   bool
	code    int
	reason  string
	unclean bool // the connection dropped: no close frame came (wasClean false)
}

// AcceptWebSocket keeps server among the object's sockets (rule W1).
func (v hostView) AcceptWebSocket(server *object.WebSocket, tags []string) error {
	h := v.h
	ws := h.sockets()
	if len(ws.open) >= object.MaxWebSockets {
		return fmt.Errorf("%w: Error: only %d websockets can be accepted on a single Durable Object instance", object.ErrWebSocket, object.MaxWebSockets)
	}
	hosting := object.Hosting(seal.Key{})
	n := h.socketNumber()
	ws.accepted = max(ws.accepted, n)
	h.ns.r.sockets++
	s := &socket{h: h, n: n, id: h.ns.r.sockets, server: server, client: hosting.Peer(server), tags: slices.Clone(tags)}
	hosting.LinkWebSocket(server, s)
	ws.add(s)
	h.event(object.Event{Kind: object.EventWebSocketAccept, Name: s.label(), Note: tagsNote(tags)})
	return nil
}

// socketNumber is the number the socket h accepts now gets: one more than
// it ever accepted, or in a replay the number the replayed turn's socket
// got; a turn that keeps a history records it (ReadSocket).
func (h *host) socketNumber() int {
	r, n := h.ns.r, h.ws.accepted+1
	if r.replay != nil {
		return r.replay.socketNumber(r, h, n)
	}
	if r.hist != nil {
		if tl := r.current(h); tl != nil {
			tl.Reads = append(tl.Reads, Read{Kind: ReadSocket, Value: uint64(n)})
		}
	}
	return n
}

// tagsNote is the accept event's note: the socket's tags.
func tagsNote(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	b := []byte("tags=")
	for i, t := range tags {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, t)
	}
	return string(b)
}

// WebSockets returns the open sockets, those with tag when it is not "".
// All of them come newest first, those of a tag oldest first, as the
// platform keeps them (workerd's hibernation manager: allWs.push_front,
// each tag's list->add).
func (v hostView) WebSockets(tag string) []*object.WebSocket {
	if v.h.ws == nil {
		return nil
	}
	open := v.h.ws.open
	out := make([]*object.WebSocket, 0, len(open))
	if tag == "" {
		for i := len(open) - 1; i >= 0; i-- {
			out = append(out, open[i].server)
		}
		return out
	}
	for _, s := range open {
		if slices.Contains(s.tags, tag) {
			out = append(out, s.server)
		}
	}
	return out
}

// WebSocketTags returns the tags ws was accepted with.
func (v hostView) WebSocketTags(ws *object.WebSocket) []string {
	if v.h.ws == nil {
		return nil
	}
	if s := v.h.ws.byHandler[ws]; s != nil {
		return slices.Clone(s.tags)
	}
	return nil
}

// SetWebSocketAutoResponse sets the object's auto-response pair.
func (v hostView) SetWebSocketAutoResponse(request, response string) {
	ws := v.h.sockets()
	ws.autoReq, ws.autoResp, ws.hasAuto = request, response, request != "" || response != ""
}

// WebSocketAutoResponseTimestamp returns when ws last got the
// auto-response.
func (v hostView) WebSocketAutoResponseTimestamp(ws *object.WebSocket) (time.Time, bool) {
	if v.h.ws == nil {
		return time.Time{}, false
	}
	s := v.h.ws.byHandler[ws]
	if s == nil || !s.autoSent {
		return time.Time{}, false
	}
	return v.h.ns.r.start.Add(s.autoAt), true
}

// label names the socket in the trace: ws1, ws2, ...
func (s *socket) label() string { return "ws" + strconv.Itoa(s.n) }

// Label names an end of the socket.
func (s *socket) Label(ws *object.WebSocket) string {
	if ws == s.client {
		return s.label() + " (client)"
	}
	return s.label()
}

// Attach keeps the server end's serialized attachment (rule W3).
func (s *socket) Attach(_ *object.WebSocket, data []byte) { s.attachment = data }

// Attachment returns the server end's serialized attachment.
func (s *socket) Attachment(*object.WebSocket) []byte { return s.attachment }

// errAfterClose is the platform's error for a send on a closed end.
var errAfterClose = fmt.Errorf("%w: %s", object.ErrWebSocket, "TypeError: Can't call WebSocket send() after close().")

// Send sends a message from one end to the other, down its wire
// (websocket_wire.go): the client's becomes, when it arrives, an event of
// the object (or the auto-response, rule W4); the object's waits in the
// client's inbox.
func (s *socket) Send(from *object.WebSocket, m object.Message) error {
	if from == s.server {
		if s.serverClosed {
			return errAfterClose
		}
		if s.clientGone() {
			return nil // the client is gone: the message is lost on the wire
		}
		s.post(&s.down, false, wsEvent{msg: m})
		return nil
	}
	if s.dropped {
		return nil // lost, as a browser's send on a dropped (CLOSED) socket is
	}
	if s.clientClosed {
		return errAfterClose
	}
	if s.serverClosed {
		return nil
	}
	s.post(&s.up, true, wsEvent{msg: m})
	return nil
}

// Close closes the connection from one end. The object's close leaves
// the object's lists at once and travels to the client, whose WebSocket
// answers it, as a browser's does: the answer is an event of the object's
// (WebSocketClose with the object's code and reason, as on the platform).
// The client's close travels to the object as an event of its; the socket
// leaves the object's lists after its turn, and the client learns of a
// close only if the object closes the socket too (the platform does not
// answer a client's close for a hibernatable socket: its handler must).
func (s *socket) Close(from *object.WebSocket, code int, reason string) error {
	if from == s.server {
		if s.serverClosed {
			return nil
		}
		s.serverClosed = true
		s.leave()
		s.h.event(object.Event{Kind: object.EventWebSocketClose, Name: s.label(), Note: "code=" + strconv.Itoa(code) + " by=object", Reason: reason})
		if !s.clientGone() {
			s.post(&s.down, false, wsEvent{close: true, code: code, reason: reason})
		}
		return nil
	}
	if s.clientClosed || s.dropped {
		return nil
	}
	s.clientClosed = true
	s.post(&s.up, true, wsEvent{close: true, code: code, reason: reason})
	return nil
}

// clientGone reports whether nothing sent to the client arrives any more.
func (s *socket) clientGone() bool { return s.dropped || s.closed != nil }

// leave takes the socket out of the object's lists.
func (s *socket) leave() {
	ws := s.h.ws
	if i := slices.Index(ws.open, s); i >= 0 {
		ws.open = slices.Delete(ws.open, i, i+1)
	}
	delete(ws.byHandler, s.server)
}

// wake lets the client's waiting Receive go on.
func (s *socket) wake() {
	if s.wait != nil {
		w := s.wait
		s.wait = nil
		w.Fire(s.h.ns.r.k)
	}
}

// Receive waits for the next message to the client end (see
// object.WebSocket.Receive).
func (s *socket) Receive(ctx context.Context, _ *object.WebSocket) (object.Message, error) {
	if ctx == nil {
		return object.Message{}, ErrNotInTask
	}
	k := s.h.ns.r.k
	cur, err := k.Enter(ctx)
	if err != nil {
		return object.Message{}, err
	}
	for {
		if len(s.inbox) > 0 {
			m := s.inbox[0]
			s.inbox = s.inbox[1:]
			return m, nil
		}
		if s.closed != nil {
			cp := *s.closed
			return object.Message{}, &cp
		}
		sig := new(sched.Signal)
		s.wait = sig
		if !sig.Wait(ctx, cur, "waiting for a WebSocket message on "+s.label()) {
			if s.wait == sig {
				s.wait = nil
			}
			if k.Closed() {
				return object.Message{}, ErrClosed
			}
			return object.Message{}, ctx.Err()
		}
	}
}

// fetchWriter is the ResponseWriter a fetch handler writes to: the
// recorder, which can carry the client end of a WebSocket back
// (object.Upgrade).
type fetchWriter struct {
	*httptest.ResponseRecorder
	req *http.Request
	ws  *object.WebSocket
}

// UpgradeWebSocket makes the response carry ws, the client end of an
// accepted pair (object.Upgrade), when the request asked for it.
func (w *fetchWriter) UpgradeWebSocket(ws *object.WebSocket) error {
	if !strings.EqualFold(w.req.Header.Get("Upgrade"), "websocket") {
		return fmt.Errorf("%w: %s", object.ErrWebSocket, "TypeError: Worker tried to return a WebSocket in a response to a request which did not contain the header \"Upgrade: websocket\".")
	}
	if w.req.Method != http.MethodGet {
		return fmt.Errorf("%w: %s", object.ErrWebSocket, "WebSocket must be initiated with a GET request.")
	}
	w.ws = ws
	return nil
}

// body is the 101 response's body: the client end, and its socket.
func (w *fetchWriter) body(h *host) socketBody {
	s := h.ws.byClient(w.ws)
	return socketBody{ws: w.ws, s: s}
}

// check refuses a response that carries a socket with another status
// than 101, as the platform does.
func (w *fetchWriter) check() error {
	if w.ws != nil && w.Code != http.StatusSwitchingProtocols {
		return fmt.Errorf("%w: %s", object.ErrWebSocket, "RangeError: Responses with a WebSocket must have status code 101.")
	}
	return nil
}

// socketBody is the body of a 101 response: empty, carrying the client
// end (object.WebSocketOf) and the socket, which learns when the reply
// reaches its caller (endpoint.RoundTrip).
type socketBody struct {
	ws *object.WebSocket
	s  *socket
}

// Read reads nothing: a 101 response has no body.
func (socketBody) Read([]byte) (int, error) { return 0, io.EOF }

// Close does nothing.
func (socketBody) Close() error { return nil }

// WebSocket returns the client end the response carries (object.WebSocketOf).
func (b socketBody) WebSocket() *object.WebSocket { return b.ws }

// byClient returns the socket whose client end is ws.
func (ws *sockets) byClient(c *object.WebSocket) *socket {
	for _, s := range ws.open {
		if s.client == c {
			return s
		}
	}
	return nil
}

// state is the socket as an object's state keeps it (ObjectState).
func (s *socket) state() SocketState {
	return SocketState{N: s.n, Tags: slices.Clone(s.tags), Attachment: slices.Clone(s.attachment)}
}

// eventOf records ev, about to be delivered, for the turn's history.
func (s *socket) eventOf(ev wsEvent) *WebSocketEvent {
	return &WebSocketEvent{Socket: s.state(), Text: ev.msg.Text, Data: slices.Clone(ev.msg.Data), Binary: ev.msg.Binary,
		Close: ev.close, Code: ev.code, Reason: ev.reason, Clean: !ev.unclean}
}

// restoreSockets gives a replay's host the sockets st holds (rule C1:
// what a turn reads of them is what the turn read).
func (h *host) restoreSockets(st ObjectState) {
	if st.WebSockets == nil {
		return
	}
	ws := h.sockets()
	ws.accepted = st.WebSockets.Accepted
	for _, ss := range st.WebSockets.Open {
		ws.add(h.socketOf(ss))
	}
}

// socketOf makes a socket of h as ss describes it, its pair linked.
func (h *host) socketOf(ss SocketState) *socket {
	hosting := object.Hosting(seal.Key{})
	client, server := object.NewWebSocketPair()
	s := &socket{h: h, n: ss.N, server: server, client: client, tags: slices.Clone(ss.Tags), attachment: slices.Clone(ss.Attachment), delivered: true}
	hosting.LinkWebSocket(server, s)
	return s
}

// add puts s among the open sockets.
func (ws *sockets) add(s *socket) {
	ws.open = append(ws.open, s)
	if ws.byHandler == nil {
		ws.byHandler = map[*object.WebSocket]*socket{}
	}
	ws.byHandler[s.server] = s
}

// replayWebSocket runs the WebSocket turn e records on the running task,
// as the socket's task ran it: on the socket the state holds, or, for the
// close of one the object had closed, on one made as it was.
func (h *host) replayWebSocket(ctx context.Context, e *WebSocketEvent) {
	var s *socket
	for _, o := range h.sockets().open {
		if o.n == e.Socket.N {
			s = o
		}
	}
	if s == nil {
		s = h.socketOf(e.Socket)
		s.serverClosed = true
	}
	ev := wsEvent{msg: object.Message{Text: e.Text, Data: e.Data, Binary: e.Binary}, close: e.Close, code: e.Code, reason: e.Reason, unclean: !e.Clean}
	t := sched.FromContext(ctx)
	wt := &wsTurn{h: h, s: s}
	saved := t.Work()
	t.SetWork(wt)
	wt.one(ctx, t, ev)
	t.SetWork(saved)
}

// sockets returns h's WebSockets, made on first use: most objects never
// accept one, and a host keeps nothing for them.
func (h *host) sockets() *sockets {
	if h.ws == nil {
		h.ws = &sockets{}
	}
	return h.ws
}
