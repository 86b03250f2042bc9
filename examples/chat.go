package examples

import (
	"context"
	"net/http"

	"github.com/dosim/dosim/object"
)

// Chat is a chat room after the platform's WebSocket hibernation example
// (rules W1-W5): a member joins with GET /join?name=NAME, its socket
// tagged "member" and "user:NAME" with its name kept as the socket's
// attachment (which, unlike a field, survives hibernation); each message
// is broadcast to every member as "NAME: text"; a member that leaves is
// announced, and its close answered. Joining again under the same name
// closes the earlier socket first, so that a socket whose 101 reply was
// lost (an orphan no client has) does not stay.
type Chat struct {
	st *object.State
}

// NewChat is Chat's constructor.
func NewChat(st *object.State) object.Object { return &Chat{st: st} }

// Methods lists Chat's methods.
func (c *Chat) Methods() object.Methods {
	return object.Methods{"Members": object.Func(c.Members)}
}

// Members returns how many members are connected.
func (c *Chat) Members(ctx context.Context) (int, error) {
	return len(c.st.GetWebSockets("member")), nil
}

// chatMember is a member socket's attachment.
type chatMember struct {
	Name string `json:"name"`
}

// ServeHTTP accepts a member: GET /join?name=NAME with Upgrade: websocket.
func (c *Chat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if r.URL.Path != "/join" || name == "" {
		http.Error(w, "join with GET /join?name=NAME", http.StatusBadRequest)
		return
	}
	for _, old := range c.st.GetWebSockets("user:" + name) {
		_ = old.Close(4000, "joined again")
	}
	client, server := object.NewWebSocketPair()
	if err := c.st.AcceptWebSocket(server, "member", "user:"+name); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err := server.SerializeAttachment(chatMember{Name: name}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if err := object.Upgrade(w, client); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// name is the member's name, from its socket's attachment.
func (c *Chat) name(ws *object.WebSocket) string {
	var m chatMember
	_, _ = ws.DeserializeAttachment(&m)
	return m.Name
}

// WebSocketMessage broadcasts a member's message to every member.
func (c *Chat) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	return c.broadcast(c.name(ws)+": "+msg.Text, nil)
}

// WebSocketClose answers a member's close and announces that it left,
// unless it is still there through another socket: one whose upgrade
// dropped (its 101 lost, code 1006) while it joined again, or one it
// replaced by joining again.
func (c *Chat) WebSocketClose(ctx context.Context, ws *object.WebSocket, code int, reason string, wasClean bool) error {
	name := c.name(ws)
	for _, other := range c.st.GetWebSockets("user:" + name) {
		if other != ws {
			return ws.Close(1000, "goodbye")
		}
	}
	if err := c.broadcast(name+" left", ws); err != nil {
		return err
	}
	return ws.Close(1000, "goodbye")
}

// broadcast sends line to every member but skip.
func (c *Chat) broadcast(line string, skip *object.WebSocket) error {
	for _, m := range c.st.GetWebSockets("member") {
		if m == skip {
			continue
		}
		if err := m.Send(line); err != nil {
			return err
		}
	}
	return nil
}
