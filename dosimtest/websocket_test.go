package dosimtest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// echoRoom broadcasts each message to every socket it holds.
type echoRoom struct{ st *object.State }

func (echoRoom) Methods() object.Methods { return object.Methods{} }

func (e echoRoom) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client, server := object.NewWebSocketPair()
	if err := e.st.AcceptWebSocket(server, "all"); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if err := e.st.Storage().Put(r.Context(), "joined:"+r.URL.Query().Get("name"), true); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = object.Upgrade(w, client)
}

func (e echoRoom) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	n, _, err := object.GetAs[int](ctx, e.st.Storage(), "messages")
	if err != nil {
		return err
	}
	if err := e.st.Storage().Put(ctx, "messages", n+1); err != nil {
		return err
	}
	for _, m := range e.st.GetWebSockets("all") {
		_ = m.Send(msg.Text)
	}
	return nil
}

// C10: an explored run with WebSocket turns is judged without a cry of
// wolf: the model does not replay a WebSocket event yet, so a history
// with one is left unchecked, never reported as a violation; the fetches
// that open the sockets, lost replies and all, are judged as calls are.
func TestC10_AnExploredChatIsNotAViolation(t *testing.T) {
	sum := dosimtest.Func(t, explore.Options{Seeds: 300, MinChecked: -1}, func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("ROOM", func(st *object.State) object.Object { return echoRoom{st: st} })
		var clients []*object.WebSocket
		for _, name := range []string{"a", "b"} {
			room, err := ns.GetByName("lobby")
			if err != nil {
				return err
			}
			req, _ := http.NewRequest(http.MethodGet, "http://room/?name="+name, nil)
			if ws, err := room.Connect(ctx, req); err == nil {
				clients = append(clients, ws)
			}
		}
		for _, c := range clients {
			if err := c.Send("hello"); err != nil {
				return err
			}
		}
		for _, c := range clients {
			for range clients {
				if _, err := c.Receive(ctx); err != nil {
					return err
				}
			}
		}
		return nil
	})
	require.NotNil(t, sum)
	assert.Zero(t, sum.Total, "no violation")
	assert.Positive(t, sum.Unchecked[explore.ReasonUnreproducible], "the histories with WebSocket turns are left unchecked, and say so")
}
