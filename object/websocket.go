package object

// WebSockets after the platform's WebSocket Hibernation API (rules W1-W5):
// an object's fetch handler makes a pair (NewWebSocketPair), accepts the
// server end with tags (State.AcceptWebSocket) and returns the client end
// in a 101 response (Upgrade); its events reach the object's handlers
// (WebSocketMessager, WebSocketCloser) as turns through its input gate.
// The runtime keeps accepted sockets, their tags and attachments, beside
// the object's storage: they survive the instance (hibernation, W4).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"
)

// ErrWebSocket is wrapped by the errors of the WebSocket API: a limit
// passed, a socket used as the platform does not allow. Each error's text
// is the platform's (real workerd 1.20261117.1).
var ErrWebSocket = errors.New("websocket")

// The platform's limits (rules W1, W3), as real workerd 1.20261117.1
// enforces them.
const (
	MaxWebSocketTags        = 10    // distinct tags of one socket
	MaxWebSocketTagLength   = 256   // characters of one tag
	MaxWebSockets           = 32768 // sockets one object accepts
	MaxWebSocketAttachment  = 16384 // bytes of a socket's attachment, as V8 serializes it
	MaxWebSocketCloseReason = 123   // bytes of a close reason, UTF-8
)

// A Message is one WebSocket message: text, or binary data.
type Message struct {
	Text   string // a text message's
	Data   []byte // a binary message's
	Binary bool
}

// String returns a text message's text, and a binary one's size.
func (m Message) String() string {
	if m.Binary {
		return fmt.Sprintf("<%d bytes>", len(m.Data))
	}
	return m.Text
}

// CloseError is what Receive returns once the connection has closed: the
// close code and reason the other end gave (1005 and "" when it gave none,
// 1006 when the connection dropped without a close).
type CloseError struct {
	Code   int
	Reason string
}

// Error says how the connection closed.
func (e *CloseError) Error() string {
	return fmt.Sprintf("websocket closed: code %d reason %q", e.Code, e.Reason)
}

// WebSocket is one end of a WebSocket connection. The server end is the
// object's once it accepts it (State.AcceptWebSocket); the client end is
// the caller's, from Stub.Connect or WebSocketOf. Use a socket from one
// simulated task at a time, as object code uses everything.
type WebSocket struct {
	peer   *WebSocket
	server bool
	link   socketLink // the runtime's, once the server end is accepted
	used   bool       // returned in a response (Upgrade)
}

// socketLink is the runtime's side of an accepted pair (see
// hosting.LinkWebSocket): it keeps the socket's state and carries what its
// ends send.
type socketLink interface {
	Send(from *WebSocket, m Message) error
	Close(from *WebSocket, code int, reason string) error
	Receive(ctx context.Context, at *WebSocket) (Message, error)
	Disconnect(from *WebSocket) error
	Attach(ws *WebSocket, data []byte)
	Attachment(ws *WebSocket) []byte
	Label(ws *WebSocket) string
}

// NewWebSocketPair returns the two ends of a new connection, as the
// platform's new WebSocketPair(): accept server (State.AcceptWebSocket)
// and return client (Upgrade).
func NewWebSocketPair() (client, server *WebSocket) {
	client, server = &WebSocket{}, &WebSocket{server: true}
	client.peer, server.peer = server, client
	return client, server
}

// String names the socket as the trace does ("ws1", "ws1 (client)").
func (ws *WebSocket) String() string {
	if ws.link == nil {
		return "websocket (not accepted)"
	}
	return ws.link.Label(ws)
}

// Send sends a text message to the other end.
func (ws *WebSocket) Send(text string) error { return ws.send(Message{Text: text}) }

// SendBytes sends a binary message to the other end.
func (ws *WebSocket) SendBytes(data []byte) error {
	return ws.send(Message{Data: append([]byte(nil), data...), Binary: true})
}

func (ws *WebSocket) send(m Message) error {
	if ws.link == nil {
		return wsError("TypeError: You must call one of accept() or state.acceptWebSocket() on this WebSocket before sending messages.")
	}
	return ws.link.Send(ws, m)
}

// Close closes the connection with code (1000 to 4999 but for 1004, 1005,
// 1006 and 1015, which the protocol keeps for itself) and a reason of at
// most 123 bytes; the other end learns both.
func (ws *WebSocket) Close(code int, reason string) error {
	if code < 1000 || code > 4999 || code == 1004 || code == 1005 || code == 1006 || code == 1015 {
		return wsError(fmt.Sprintf("InvalidAccessError: Invalid WebSocket close code: %d.", code))
	}
	if len(reason) > MaxWebSocketCloseReason {
		return wsError("SyntaxError: WebSocket close reason must not be longer than 123 bytes when UTF-8 encoded.")
	}
	if !utf8.ValidString(reason) {
		return fmt.Errorf("%w: close reason %q is not UTF-8", ErrWebSocket, reason)
	}
	if ws.link == nil {
		return wsError("TypeError: You must call one of accept() or state.acceptWebSocket() on this WebSocket before sending messages.")
	}
	return ws.link.Close(ws, code, reason)
}

// Receive waits in virtual time for the next message sent to this end,
// the client end's (an object gets its messages through its
// WebSocketMessage handler). Once the connection has closed and every
// message before the close was received, it returns a *CloseError.
func (ws *WebSocket) Receive(ctx context.Context) (Message, error) {
	if ws.server {
		return Message{}, fmt.Errorf("%w: Receive is for the client end: the object's messages reach its WebSocketMessage handler", ErrWebSocket)
	}
	if ws.link == nil {
		return Message{}, fmt.Errorf("%w: the server end of this socket was never accepted (State.AcceptWebSocket)", ErrWebSocket)
	}
	return ws.link.Receive(ctx, ws)
}

// Disconnect drops the connection without a close, as a lost network or a
// closed laptop lid does (rule W5), from the client end: what is on its way
// either way is lost, Receive ends with a *CloseError of code 1006, and the
// object's WebSocketClose gets code 1006, the platform's reason ("WebSocket
// disconnected without sending Close frame.") and wasClean false.
func (ws *WebSocket) Disconnect() error {
	if ws.link == nil {
		return fmt.Errorf("%w: the server end of this socket was never accepted (State.AcceptWebSocket)", ErrWebSocket)
	}
	return ws.link.Disconnect(ws)
}

// SerializeAttachment keeps v, plain data, with the socket (rule W3): it
// survives the object's hibernation, where fields do not. v is kept as
// JSON and measured as the platform measures it, by the size of V8's
// serialization of the same value (at most 16,384 bytes). nil removes it.
func (ws *WebSocket) SerializeAttachment(v any) error {
	if !ws.server || ws.link == nil {
		return fmt.Errorf("%w: only an accepted server end (State.AcceptWebSocket) keeps an attachment", ErrWebSocket)
	}
	if v == nil {
		ws.link.Attach(ws, nil)
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: attachment: %w", ErrWebSocket, err)
	}
	if n := v8Size(data); n > MaxWebSocketAttachment {
		return wsError(fmt.Sprintf("Error: A WebSocket 'attachment' cannot be larger than %d bytes.'attachment' was %d bytes.", MaxWebSocketAttachment, n))
	}
	ws.link.Attach(ws, data)
	return nil
}

// DeserializeAttachment decodes the socket's attachment into out (a
// pointer) and reports whether it has one.
func (ws *WebSocket) DeserializeAttachment(out any) (bool, error) {
	if !ws.server || ws.link == nil {
		return false, nil
	}
	data := ws.link.Attachment(ws)
	if data == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return true, fmt.Errorf("%w: attachment: %w", ErrWebSocket, err)
	}
	return true, nil
}

// Upgrade answers a fetch with 101 Switching Protocols and the client end
// of a pair whose server end the object accepted, as the platform's new
// Response(null, {status: 101, webSocket: client}). The request must have
// asked for it (Upgrade: websocket).
func Upgrade(w http.ResponseWriter, client *WebSocket) error {
	if client == nil || client.server {
		return fmt.Errorf("%w: Upgrade takes the client end of a pair", ErrWebSocket)
	}
	if client.used {
		return wsError("TypeError: Can't return WebSocket that was already used in a response.")
	}
	if client.link == nil {
		return fmt.Errorf("%w: the server end was never accepted: call State.AcceptWebSocket first", ErrWebSocket)
	}
	up, ok := w.(interface{ UpgradeWebSocket(*WebSocket) error })
	if !ok {
		return fmt.Errorf("%w: Upgrade answers a fetch the runtime sends (Stub.Fetch, Stub.Connect)", ErrWebSocket)
	}
	if err := up.UpgradeWebSocket(client); err != nil {
		return err
	}
	client.used = true
	w.WriteHeader(http.StatusSwitchingProtocols)
	return nil
}

// WebSocketOf returns the client end a 101 response carries (from
// Stub.Fetch), as the platform's response.webSocket.
func WebSocketOf(resp *http.Response) (*WebSocket, bool) {
	if resp == nil {
		return nil, false
	}
	b, ok := resp.Body.(interface{ WebSocket() *WebSocket })
	if !ok {
		return nil, false
	}
	return b.WebSocket(), true
}

// WebSocketMessager is implemented by a class that takes its sockets'
// messages (rule W2): each is a turn through the object's input gate, in
// the order the client sent them.
type WebSocketMessager interface {
	WebSocketMessage(ctx context.Context, ws *WebSocket, msg Message) error
}

// WebSocketCloser is implemented by a class that learns when a client
// closes a socket (rule W2): code and reason are the client's, wasClean
// false when the connection dropped without a close.
type WebSocketCloser interface {
	WebSocketClose(ctx context.Context, ws *WebSocket, code int, reason string, wasClean bool) error
}

// AcceptWebSocket accepts the server end of a pair with tags, through
// which GetWebSockets finds it (rule W1): at most 10 distinct tags (a tag
// given twice counts once, and is kept once) of at most 256 characters,
// and at most 32,768 sockets an object. The object's
// handlers get its events from now on, through any instance of the
// object: an accepted socket survives hibernation (rule W4).
func (s *State) AcceptWebSocket(ws *WebSocket, tags ...string) error {
	if ws == nil || !ws.server {
		return fmt.Errorf("%w: AcceptWebSocket takes the server end of a pair (NewWebSocketPair)", ErrWebSocket)
	}
	if ws.link != nil {
		return fmt.Errorf("%w: Error: Cannot call `acceptWebSocket()` if the WebSocket was already accepted via `accept()`", ErrWebSocket)
	}
	if ws.peer.used {
		return wsError("Error: Cannot call `acceptWebSocket()` on this WebSocket because its pair has already been accepted or used in a Response.")
	}
	tags = distinct(tags)
	if len(tags) > MaxWebSocketTags {
		return fmt.Errorf("%w: Error: a Hibernatable WebSocket cannot have more than %d tags", ErrWebSocket, MaxWebSocketTags)
	}
	for _, t := range tags {
		if utf8.RuneCountInString(t) > MaxWebSocketTagLength {
			return wsError(fmt.Sprintf("Error: \"%s\" is longer than the max tag length (%d characters).", t, MaxWebSocketTagLength))
		}
	}
	if s.reset != nil { // a stale instance (rule L4)
		return s.reset
	}
	return s.host.AcceptWebSocket(ws, tags)
}

// GetWebSockets returns the object's open sockets (their server ends):
// all of them newest first, or those accepted with tag oldest first, as
// the platform lists them (its list of all sockets grows at the front,
// each tag's at the back).
func (s *State) GetWebSockets(tag string) []*WebSocket { return s.host.WebSockets(tag) }

// GetTags returns the tags ws was accepted with.
func (s *State) GetTags(ws *WebSocket) []string { return s.host.WebSocketTags(ws) }

// SetWebSocketAutoResponse makes the runtime answer a client message equal
// to request with response itself, without waking the object (rule W4);
// two empty strings remove the pair.
func (s *State) SetWebSocketAutoResponse(request, response string) {
	s.host.SetWebSocketAutoResponse(request, response)
}

// GetWebSocketAutoResponseTimestamp returns when ws last got the
// auto-response; ok is false when it never did.
func (s *State) GetWebSocketAutoResponseTimestamp(ws *WebSocket) (at time.Time, ok bool) {
	return s.host.WebSocketAutoResponseTimestamp(ws)
}

// LinkWebSocket gives the two ends of an accepted pair the runtime's link.
// For package runtime.
func (hosting) LinkWebSocket(server *WebSocket, link socketLink) {
	server.link, server.peer.link = link, link
}

// Peer returns the other end of ws. For package runtime.
func (hosting) Peer(ws *WebSocket) *WebSocket { return ws.peer }

// IsServer reports whether ws is a pair's server end. For package runtime.
func (hosting) IsServer(ws *WebSocket) bool { return ws.server }

// distinct returns tags without repeats, in the order first given.
func distinct(tags []string) []string {
	out := tags[:0:0]
	for _, t := range tags {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// wsError is an error of the WebSocket API in the platform's words, which
// end with a full stop: it wraps ErrWebSocket.
func wsError(msg string) error { return fmt.Errorf("%w: %s", ErrWebSocket, msg) }
