package examples_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// joinChat connects name to the chat room through a fresh stub, trying
// again (a new call) while the upgrade fails, as a client's reconnect loop
// does; it gives up after tries.
func joinChat(ctx context.Context, ns *runtime.Namespace, name string, tries int) (*object.WebSocket, error) {
	var last error
	for range tries {
		s, err := ns.GetByName("lobby")
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequest(http.MethodGet, "http://chat/join?name="+name, nil)
		if err != nil {
			return nil, err
		}
		ws, err := s.Connect(ctx, req)
		if err == nil {
			return ws, nil
		}
		last = err
	}
	return nil, last
}

// W1-W4: the built-in chat room broadcasts, announces a leave and answers
// its close, and keeps a member's name through hibernation.
func TestW1_W4_TheChatRoomBroadcastsAndHibernates(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("CHAT", examples.NewChat)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		ada, err := joinChat(ctx, ns, "ada", 1)
		require.NoError(t, err)
		bob, err := joinChat(ctx, ns, "bob", 1)
		require.NoError(t, err)
		require.NoError(t, rt.Sleep(ctx, runtime.HibernateAfter+time.Second)) // the room hibernates
		require.NoError(t, ada.Send("hello"))
		for _, ws := range []*object.WebSocket{ada, bob} {
			m, err := ws.Receive(ctx)
			require.NoError(t, err)
			assert.Equal(t, "ada: hello", m.Text, "the name came back from the attachment after the wake")
		}
		require.NoError(t, bob.Close(1000, "bye"))
		m, err := ada.Receive(ctx)
		require.NoError(t, err)
		assert.Equal(t, "bob left", m.Text)
		_, err = bob.Receive(ctx)
		var closed *object.CloseError
		require.ErrorAs(t, err, &closed, "the room answers bob's close")
		assert.Equal(t, 1000, closed.Code)
		members, err := stub.CallAs[int](ctx, mustChat(t, ns), "Members")
		require.NoError(t, err)
		assert.Equal(t, 1, members)
		return nil
	}))
	assert.Contains(t, rt.Trace(), "evicted")
}

func mustChat(t *testing.T, ns *runtime.Namespace) *stub.Stub {
	t.Helper()
	s, err := ns.GetByName("lobby")
	require.NoError(t, err)
	return s
}

// W5, C10: explored under the default strategy, a chat whose members
// reconnect while their upgrade fails gives every member every message
// sent after it joined (an upgrade whose 101 was lost dropped, and was
// announced as a leave before the member joined again), and the model
// checks every history, its WebSocket turns replayed. The default rates
// drop connections too (drop-connection, as a message is sent): a member
// whose connection dropped hears nothing more, and one that joined after
// ada's connection dropped may never hear of her; but when ada's own
// "hi" came back to her, every member still connected hears it.
func TestW5_TheChatRoomExploresClean(t *testing.T) {
	var drops atomic.Int64 // seeds run on several workers
	sum := dosimtest.Func(t, explore.Options{Seeds: 500}, func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("CHAT", examples.NewChat)
		var members []*object.WebSocket
		for _, name := range []string{"ada", "bob"} {
			ws, err := joinChat(ctx, ns, name, 20)
			if err != nil {
				return nil // the link refused every try: nothing more to check
			}
			members = append(members, ws)
		}
		if err := members[0].Send("hi"); err != nil {
			return err
		}
		if err := rt.Sleep(ctx, 10*time.Second); err != nil { // all that will arrive has
			return err
		}
		heard := make([]string, len(members))
		for i, ws := range members {
			var err error
			if heard[i], err = heardOfHi(ctx, ws); err != nil {
				return err
			}
			if heard[i] == "dropped" {
				drops.Add(1)
			}
		}
		if heard[0] == "ada: hi" && heard[1] == "nothing" {
			return errors.New("bob, still connected, never heard ada's hi, which the room sent back to her")
		}
		return nil
	})
	assert.Zero(t, sum.Unchecked[explore.ReasonUnreproducible], "every WebSocket turn replayed")
	assert.True(t, sum.CheckedEnough(), "checked %.2f", sum.CheckedShare())
	assert.Positive(t, sum.Fired["websocket"]["drop-connection"], "the default rates dropped connections")
	assert.Positive(t, drops.Load(), "some member saw its connection drop")
}

// heardOfHi reads what ws has received, without waiting: ada's "hi", or
// the news that ada left, or that ws's own connection dropped
// ("dropped"), or none of them ("nothing"). A member whose upgrade
// dropped was announced as gone before it joined again: those leaves are
// skipped.
func heardOfHi(ctx context.Context, ws *object.WebSocket) (string, error) {
	now, cancel := context.WithCancel(ctx)
	cancel() // Receive returns what arrived, then ends
	for {
		m, err := ws.Receive(now)
		var closed *object.CloseError
		switch {
		case errors.As(err, &closed) && closed.Code == 1006:
			return "dropped", nil
		case errors.Is(err, context.Canceled):
			return "nothing", nil
		case err != nil:
			return "", err
		case m.Text == "ada: hi" || m.Text == "ada left":
			return m.Text, nil
		case !strings.HasSuffix(m.Text, " left"):
			return "", &unexpected{got: m.Text}
		}
	}
}

type unexpected struct{ got string }

func (e *unexpected) Error() string { return "a member received " + e.got + ", not \"ada: hi\"" }

// W1: an upgrade answered with another status than 101 fails in the
// platform's words, naming the status.
func TestW1_AnUpgradeAnsweredWithoutA101Fails(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("CHAT", examples.NewChat)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		req, err := http.NewRequest(http.MethodGet, "http://chat/join", nil) // no name: 400
		require.NoError(t, err)
		_, err = mustChat(t, ns).Connect(ctx, req)
		assert.ErrorIs(t, err, object.ErrWebSocket)
		assert.EqualError(t, err, "stub: Connect: websocket: TypeError: Failed to establish the WebSocket connection: expected server to reply with HTTP status code 101 (switching protocols), but received 400 instead.")
		return nil
	}))
}
