package runtime_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dosim/dosim/object"
)

// misuseRoom records what each misuse of the WebSocket API returns, in
// its fetch handler (the only place an object makes pairs).
type misuseRoom struct {
	st   *object.State
	errs map[string]any
}

func (misuseRoom) Methods() object.Methods { return object.Methods{} }

func (m misuseRoom) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := m.errs
	client, server := object.NewWebSocketPair()
	e["accept nil"] = m.st.AcceptWebSocket(nil)
	e["accept the client end"] = m.st.AcceptWebSocket(client)
	e["upgrade before accept"] = object.Upgrade(w, client)
	e["close before accept"] = server.Close(1000, "")
	e["receive before accept"] = second(client.Receive(r.Context()))
	e["disconnect before accept"] = client.Disconnect()
	attached, _ := server.DeserializeAttachment(new(string))
	e["deserialize before accept"] = attached
	must(m.st.AcceptWebSocket(server, "t"))
	e["serialize on the client end"] = client.SerializeAttachment("x")
	e["receive on the server end"] = second(server.Receive(r.Context()))
	e["disconnect the server end"] = server.Disconnect()
	e["upgrade the server end"] = object.Upgrade(w, server)
	e["upgrade nil"] = object.Upgrade(w, nil)
	e["upgrade to a writer of its own"] = object.Upgrade(httptest.NewRecorder(), client)
	e["attachment not JSON"] = server.SerializeAttachment(func() {})
	e["close reason not UTF-8"] = server.Close(1000, "\xff")
	must(object.Upgrade(w, client))
	e["upgrade twice"] = object.Upgrade(w, client)
}

func second(_ object.Message, err error) error { return err }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// W1-W5, bad input: each misuse of the WebSocket API is an error wrapping
// object.ErrWebSocket that says what to do instead, never a panic, and the
// socket goes on working.
func TestW_MisusesOfTheWebSocketAPIAreErrors(t *testing.T) {
	errs := map[string]any{}
	rt := newRuntime(t)
	ns := rt.Namespace("MISUSE", func(st *object.State) object.Object { return misuseRoom{st: st, errs: errs} })
	run(t, rt, func(ctx context.Context) error {
		req, _ := http.NewRequest(http.MethodGet, "http://misuse/", nil)
		ws, err := mustGet(t, ns, "m").Connect(ctx, req)
		assert.NoError(t, err, "the socket works after the misuses")
		if ws != nil {
			assert.NoError(t, ws.Send("still works"))
		}
		_, err = mustGet(t, ns, "m").Connect(ctx, nil)
		assert.EqualError(t, err, "stub: Connect: request is nil")
		return nil
	})
	want := map[string]string{
		"accept nil":                     "websocket: AcceptWebSocket takes the server end of a pair (NewWebSocketPair)",
		"accept the client end":          "websocket: AcceptWebSocket takes the server end of a pair (NewWebSocketPair)",
		"upgrade before accept":          "websocket: the server end was never accepted: call State.AcceptWebSocket first",
		"close before accept":            "websocket: TypeError: You must call one of accept() or state.acceptWebSocket() on this WebSocket before sending messages.",
		"receive before accept":          "websocket: the server end of this socket was never accepted (State.AcceptWebSocket)",
		"disconnect before accept":       "websocket: the server end of this socket was never accepted (State.AcceptWebSocket)",
		"serialize on the client end":    "websocket: only an accepted server end (State.AcceptWebSocket) keeps an attachment",
		"receive on the server end":      "websocket: Receive is for the client end: the object's messages reach its WebSocketMessage handler",
		"disconnect the server end":      "websocket: Disconnect is for the client end: the object closes a socket with Close",
		"upgrade the server end":         "websocket: Upgrade takes the client end of a pair",
		"upgrade nil":                    "websocket: Upgrade takes the client end of a pair",
		"upgrade to a writer of its own": "websocket: Upgrade answers a fetch the runtime sends (Stub.Fetch, Stub.Connect)",
		"attachment not JSON":            "websocket: attachment: json: unsupported type: func()",
		"close reason not UTF-8":         `websocket: close reason "\xff" is not UTF-8`,
		"upgrade twice":                  "websocket: TypeError: Can't return WebSocket that was already used in a response.",
	}
	for k, w := range want {
		err, _ := errs[k].(error)
		if assert.Error(t, err, k) {
			assert.ErrorIs(t, err, object.ErrWebSocket, k)
			assert.Equal(t, w, err.Error(), k)
		}
	}
	assert.Equal(t, false, errs["deserialize before accept"], "no attachment before accept")
}
