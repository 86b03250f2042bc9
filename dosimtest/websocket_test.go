package dosimtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

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

// C1, C10: an explored run with WebSocket turns is judged without a cry of
// wolf: the model replays each WebSocket event from the object's state,
// its sockets included (their tags and attachments), so every history is
// checked; the fetches that open the sockets, lost replies and all, are
// judged as calls are, and connections dropped as messages are sent
// (drop-connection, in the default rates) leave histories the model
// explains.
func TestC10_AnExploredChatIsNotAViolation(t *testing.T) {
	sum := dosimtest.Func(t, explore.Options{Seeds: 300}, func(ctx context.Context, rt *runtime.Runtime) error {
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
		if err := rt.Sleep(ctx, 10*time.Second); err != nil { // all that will arrive has
			return err
		}
		got, dropped := make([]int, len(clients)), false
		for i, c := range clients {
			var err error
			if got[i], err = received(ctx, c); errors.Is(err, errDropped) {
				dropped = true
			} else if err != nil {
				return err
			}
		}
		for i, n := range got {
			if n > len(clients) || (!dropped && n != len(clients)) {
				return fmt.Errorf("client %d received %d hellos of %d sent (a connection dropped: %t)", i, n, len(clients), dropped)
			}
		}
		return nil
	})
	require.NotNil(t, sum)
	assert.Zero(t, sum.Total, "no violation")
	assert.Positive(t, sum.Fired["websocket"]["drop-connection"], "connections dropped")
	assert.Zero(t, sum.Unchecked[explore.ReasonUnreproducible], "every WebSocket turn replayed")
	assert.True(t, sum.CheckedEnough(), "checked %.2f", sum.CheckedShare())
}

// errDropped says a client's connection dropped (code 1006).
var errDropped = errors.New("dropped")

// received counts the "hello"s c received, without waiting; the error is
// errDropped when c's connection dropped (the default rates draw
// drop-connection).
func received(ctx context.Context, c *object.WebSocket) (int, error) {
	now, cancel := context.WithCancel(ctx)
	cancel() // Receive returns what arrived, then ends
	n := 0
	for {
		m, err := c.Receive(now)
		var closed *object.CloseError
		switch {
		case errors.As(err, &closed) && closed.Code == 1006:
			return n, errDropped
		case errors.Is(err, context.Canceled):
			return n, nil
		case err != nil:
			return n, err
		case m.Text != "hello":
			return n, fmt.Errorf("received %q", m.Text)
		}
		n++
	}
}

// lobby accepts a member per connection, and counts the members it
// holds; a lost 101 reply drops the connection it carried (rule W5), so a
// member that reconnects is held once.
type lobby struct{ st *object.State }

func (lobby) Methods() object.Methods { return object.Methods{} }

func (l lobby) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client, server := object.NewWebSocketPair()
	if err := l.st.AcceptWebSocket(server, "member"); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = object.Upgrade(w, client)
}

// W5, C10: a connection whose 101 reply was lost drops, on the object's
// side too, so a client that connects again until it is connected leaves
// the object holding one socket, whatever the faults: explored, the
// lobby's own check never fails.
func TestW5_ALostUpgradeLeavesNoOrphanUnderExploration(t *testing.T) {
	sum := dosimtest.Func(t, explore.Options{Seeds: 500}, func(ctx context.Context, rt *runtime.Runtime) error {
		var st *object.State
		ns := rt.Namespace("LOBBY", func(s *object.State) object.Object { st = s; return lobby{st: s} })
		for range 50 {
			s, err := ns.GetByName("main")
			if err != nil {
				return err
			}
			req, _ := http.NewRequest(http.MethodGet, "http://lobby/", nil)
			if _, err := s.Connect(ctx, req); err == nil {
				break
			}
		}
		if err := rt.Sleep(ctx, time.Second); err != nil { // the drops' turns run
			return err
		}
		if st != nil && len(st.GetWebSockets("member")) > 1 {
			return fmt.Errorf("the lobby holds %d sockets for one client", len(st.GetWebSockets("member")))
		}
		return nil
	})
	assert.Zero(t, sum.Total)
}

// tallyRoom counts the votes its members send, each answered with the
// count. Its handler reads the count, waits (a sleep standing for an
// await), then writes: two members' votes interleave at the wait and one
// is lost. The fixed form holds the input gate across the wait
// (BlockConcurrencyWhile).
type tallyRoom struct {
	st    *object.State
	fixed bool
}

func (tallyRoom) Methods() object.Methods { return object.Methods{} }

func (r tallyRoom) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	client, server := object.NewWebSocketPair()
	if err := r.st.AcceptWebSocket(server); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = object.Upgrade(w, client)
}

func (r tallyRoom) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	vote := func(ctx context.Context) error {
		n, _, err := object.GetAs[int](ctx, r.st.Storage(), "votes")
		if err != nil {
			return err
		}
		if err := r.st.Sleep(ctx, time.Millisecond); err != nil {
			return err
		}
		return r.st.Storage().Put(ctx, "votes", n+1)
	}
	if r.fixed {
		return r.st.BlockConcurrencyWhile(ctx, vote)
	}
	return vote(ctx)
}

// vote connects two members, each of which votes once.
func vote(fixed bool) func(ctx context.Context, rt *runtime.Runtime) error {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("TALLY", func(st *object.State) object.Object { return tallyRoom{st: st, fixed: fixed} })
		var members []*object.WebSocket
		for range 2 {
			s, err := ns.GetByName("poll")
			if err != nil {
				return err
			}
			req, _ := http.NewRequest(http.MethodGet, "http://tally/", nil)
			if ws, err := s.Connect(ctx, req); err == nil {
				members = append(members, ws)
			}
		}
		for _, m := range members {
			if err := m.Send("vote"); err != nil {
				return err
			}
		}
		return rt.Sleep(ctx, time.Second) // the votes' turns run
	}
}

// W2, C1: the model judges WebSocket turns as it judges calls: two votes
// that interleave at an await and lose one are found, and the handler
// that holds the input gate across its await explores clean.
func TestW2_TheModelFindsALostUpdateAcrossWebSocketTurns(t *testing.T) {
	opts := explore.Options{Seeds: 300, Workers: 1}
	buggy, err := explore.RunFunc(opts, vote(false))
	require.NoError(t, err)
	require.Positive(t, buggy.Total, "the lost vote is found")
	assert.Contains(t, buggy.Violations[0].Message, `message "vote" at 0s let the object's input gate go while it waited for a sleep of 1ms`, "the violation names the WebSocket turn and its await")
	fixed, err := explore.RunFunc(opts, vote(true))
	require.NoError(t, err)
	assert.Zero(t, fixed.Total, "%v", fixed.Violations)
	assert.True(t, fixed.CheckedEnough(), "checked %.2f", fixed.CheckedShare())
}
