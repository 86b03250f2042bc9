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
	name := "name:" + r.URL.Query().Get("name")
	for _, old := range e.st.GetWebSockets(name) { // a reconnect replaces an orphan (rule W5)
		_ = old.Close(4000, "replaced")
	}
	client, server := object.NewWebSocketPair()
	if err := e.st.AcceptWebSocket(server, "all", name); err != nil {
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
			for range 50 { // reconnect until connected
				room, err := ns.GetByName("lobby")
				if err != nil {
					return err
				}
				req, _ := http.NewRequest(http.MethodGet, "http://room/?name="+name, nil)
				if ws, err := room.Connect(ctx, req); err == nil {
					clients = append(clients, ws)
					break
				}
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

// lobby accepts a member per connection. With fixed, a member's socket is
// tagged with its session, and a new connection of the same session closes
// the old one first: a socket whose 101 reply was lost (an orphan, rule
// W5) is closed when its client connects again.
type lobby struct {
	st    *object.State
	fixed bool
}

func (lobby) Methods() object.Methods { return object.Methods{} }

func (l lobby) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	session := "session:" + r.URL.Query().Get("session")
	if l.fixed {
		for _, old := range l.st.GetWebSockets(session) {
			_ = old.Close(4000, "replaced by a new connection")
		}
	}
	client, server := object.NewWebSocketPair()
	if err := l.st.AcceptWebSocket(server, "member", session); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = object.Upgrade(w, client)
}

// joinLobby connects one client, trying again (a new call) until a
// connection succeeds, as a client's reconnect loop does.
func joinLobby(fixed bool) func(ctx context.Context, rt *runtime.Runtime) error {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("LOBBY", func(st *object.State) object.Object { return lobby{st: st, fixed: fixed} })
		for range 50 {
			s, err := ns.GetByName("main")
			if err != nil {
				return err
			}
			req, _ := http.NewRequest(http.MethodGet, "http://lobby/?session=alice", nil)
			if _, err := s.Connect(ctx, req); err == nil {
				return nil
			}
		}
		return nil
	}
}

// W5, C8: a lost 101 leaves the object holding a socket no client has: the
// explorer reports the orphan as a liveness violation, and the lobby that
// closes a session's old socket when it connects again explores clean.
func TestW5_AnOrphanSocketIsFoundAndItsFixIsClean(t *testing.T) {
	opts := explore.Options{Seeds: 500, MinChecked: -1, Workers: 1}
	buggy, err := explore.RunFunc(opts, joinLobby(false))
	require.NoError(t, err)
	require.Positive(t, buggy.Total, "the orphan is found")
	assert.Equal(t, explore.KindLiveness, buggy.Violations[0].Kind)
	assert.Contains(t, buggy.Violations[0].Message, "an orphan WebSocket: it holds ws1, whose 101 reply never reached its caller")
	fixed, err := explore.RunFunc(opts, joinLobby(true))
	require.NoError(t, err)
	assert.Zero(t, fixed.Total, "the fixed lobby explores clean: %v", fixed.Violations)
}
