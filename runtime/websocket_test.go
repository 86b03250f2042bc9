package runtime_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// chatRoom is a chat room after the platform's WebSocket hibernation
// example: a client joins with its name (kept as the socket's
// attachment), each message is broadcast to every member, and a leave
// is broadcast too. fromField makes it keep names in a field instead, the
// bug hibernation exposes (rule W4).
type chatRoom struct {
	st        *object.State
	names     map[*object.WebSocket]string // used only with fromField
	fromField bool
	built     *int
}

func (c *chatRoom) Methods() object.Methods {
	return object.Methods{"Members": object.Func(func(ctx context.Context) (int, error) {
		return len(c.st.GetWebSockets("member")), nil
	})}
}

func (c *chatRoom) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	client, server := object.NewWebSocketPair()
	if err := c.st.AcceptWebSocket(server, "member", "user:"+name); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if c.fromField {
		c.names[server] = name
	} else if err := server.SerializeAttachment(map[string]string{"name": name}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if err := object.Upgrade(w, client); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// name is the member's name: its attachment's, or the field's.
func (c *chatRoom) name(ws *object.WebSocket) string {
	if c.fromField {
		return c.names[ws]
	}
	var a struct {
		Name string `json:"name"`
	}
	_, _ = ws.DeserializeAttachment(&a)
	return a.Name
}

func (c *chatRoom) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	line := c.name(ws) + ": " + msg.Text
	for _, m := range c.st.GetWebSockets("member") {
		if err := m.Send(line); err != nil {
			return err
		}
	}
	return nil
}

// WebSocketClose tells the others, and closes the socket with the
// client's code and reason: the platform does not answer a client's close
// for a hibernatable socket, its handler does.
func (c *chatRoom) WebSocketClose(ctx context.Context, ws *object.WebSocket, code int, reason string, wasClean bool) error {
	for _, m := range c.st.GetWebSockets("member") {
		if m != ws {
			_ = m.Send(c.name(ws) + " left")
		}
	}
	return ws.Close(code, reason)
}

// newChat returns the chat room class; built counts constructor runs.
func newChat(fromField bool, built *int) runtime.Constructor {
	return func(st *object.State) object.Object {
		*built++
		return &chatRoom{st: st, fromField: fromField, built: built, names: map[*object.WebSocket]string{}}
	}
}

// join connects name to room.
func join(t *testing.T, ctx context.Context, room *stub.Stub, name string) *object.WebSocket {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://room/?name="+name, nil)
	require.NoError(t, err)
	ws, err := room.Connect(ctx, req)
	require.NoError(t, err)
	return ws
}

// receive reads the client's next text message.
func receive(t *testing.T, ctx context.Context, ws *object.WebSocket) string {
	t.Helper()
	m, err := ws.Receive(ctx)
	require.NoError(t, err)
	return m.Text
}

// W1, W2: members join with tags and an attachment; a message reaches the
// handler as a turn and is broadcast to every member, in order; a
// client's close reaches WebSocketClose, and the socket leaves the list.
func TestW1_W2_AChatRoomBroadcastsToItsMembers(t *testing.T) {
	var built int
	rt := newRuntime(t)
	ns := rt.Namespace("ROOM", newChat(false, &built))
	run(t, rt, func(ctx context.Context) error {
		room, err := ns.GetByName("lobby")
		require.NoError(t, err)
		alice, bob := join(t, ctx, room, "alice"), join(t, ctx, room, "bob")
		require.NoError(t, alice.Send("hi"))
		require.NoError(t, alice.Send("all"))
		assert.Equal(t, "alice: hi", receive(t, ctx, bob))
		assert.Equal(t, "alice: all", receive(t, ctx, bob))
		assert.Equal(t, "alice: hi", receive(t, ctx, alice))
		members, err := stub.CallAs[int](ctx, room, "Members")
		require.NoError(t, err)
		assert.Equal(t, 2, members)

		require.NoError(t, bob.Close(1000, "bye"))
		assert.Equal(t, "alice: all", receive(t, ctx, alice))
		assert.Equal(t, "bob left", receive(t, ctx, alice))
		_, err = bob.Receive(ctx)
		var closed *object.CloseError
		require.ErrorAs(t, err, &closed)
		assert.Equal(t, 1000, closed.Code)
		assert.Equal(t, "bye", closed.Reason)
		members, err = stub.CallAs[int](ctx, room, "Members")
		require.NoError(t, err)
		assert.Equal(t, 1, members)
		assert.ErrorIs(t, bob.Send("late"), object.ErrWebSocket, "a send after close is refused")
		return nil
	})
	assert.Equal(t, 1, built)
	trace := rt.Trace()
	assert.Contains(t, trace, `websocket.accept socket=ws1 tags="member","user:alice"`)
	assert.Contains(t, trace, "websocket.message socket=ws1 hi")
	assert.Contains(t, trace, `websocket.close socket=ws2 code=1000 by=client reason="bye"`)
}

// W1, W3: the platform's limits, in its words.
func TestW1_W3_TheLimitsAreThePlatforms(t *testing.T) {
	rt := newRuntime(t)
	var errs []error
	ns := rt.Namespace("LIMITS", func(st *object.State) object.Object {
		return limitsClass{st: st, errs: &errs}
	})
	run(t, rt, func(ctx context.Context) error {
		s, err := ns.GetByName("x")
		require.NoError(t, err)
		req, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
		_, err = s.Connect(ctx, req)
		require.NoError(t, err)
		return nil
	})
	require.Len(t, errs, 4)
	assert.EqualError(t, errs[0], "websocket: Error: a Hibernatable WebSocket cannot have more than 10 tags")
	assert.EqualError(t, errs[1], `websocket: Error: "`+strings.Repeat("t", 257)+`" is longer than the max tag length (256 characters).`)
	assert.EqualError(t, errs[2], "websocket: Error: A WebSocket 'attachment' cannot be larger than 16384 bytes.'attachment' was 16387 bytes.")
	assert.EqualError(t, errs[3], "websocket: InvalidAccessError: Invalid WebSocket close code: 1005.")
}

type limitsClass struct {
	st   *object.State
	errs *[]error
}

func (limitsClass) Methods() object.Methods { return object.Methods{} }

func (c limitsClass) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client, server := object.NewWebSocketPair()
	tags := make([]string, 11)
	for i := range tags {
		tags[i] = "t" + strconv.Itoa(i)
	}
	*c.errs = append(*c.errs, c.st.AcceptWebSocket(server, tags...))
	*c.errs = append(*c.errs, c.st.AcceptWebSocket(server, strings.Repeat("t", 257)))
	if err := c.st.AcceptWebSocket(server); err != nil {
		panic(err)
	}
	*c.errs = append(*c.errs, server.SerializeAttachment(strings.Repeat("a", 16382)))
	*c.errs = append(*c.errs, server.Close(1005, ""))
	if err := object.Upgrade(w, client); err != nil {
		panic(err)
	}
}

// W4: an object whose only work is its sockets hibernates when idle 10 s
// (runtime.HibernateAfter, workerd's) and its sockets stay open: the next message runs the
// constructor again, and the attachment is still there. A class that kept
// the name in a field instead has lost it.
func TestW4_HibernationRerunsTheConstructorAndKeepsAttachments(t *testing.T) {
	for _, fromField := range []bool{false, true} {
		var built int
		rt := newRuntime(t)
		ns := rt.Namespace("ROOM", newChat(fromField, &built))
		var got string
		run(t, rt, func(ctx context.Context) error {
			room, err := ns.GetByName("lobby")
			require.NoError(t, err)
			alice := join(t, ctx, room, "alice")
			require.NoError(t, rt.Sleep(ctx, runtime.HibernateAfter+time.Second)) // hibernates
			require.NoError(t, alice.Send("back"))
			got = receive(t, ctx, alice)
			return nil
		})
		assert.Equal(t, 2, built, "the wake ran the constructor again (fromField=%v)", fromField)
		assert.Contains(t, rt.Trace(), "evicted")
		if fromField {
			assert.Equal(t, ": back", got, "a field does not survive hibernation")
		} else {
			assert.Equal(t, "alice: back", got, "the attachment survives hibernation")
		}
	}
}

// W4: an auto-response pair is answered without a turn of the object, and
// its timestamp is kept per socket.
func TestW4_AnAutoResponseDoesNotWakeTheObject(t *testing.T) {
	var built int
	rt := newRuntime(t)
	var st *object.State
	ns := rt.Namespace("ROOM", func(s *object.State) object.Object {
		st = s
		s.SetWebSocketAutoResponse("ping", "pong")
		return newChat(false, &built)(s)
	})
	run(t, rt, func(ctx context.Context) error {
		room, err := ns.GetByName("lobby")
		require.NoError(t, err)
		alice := join(t, ctx, room, "alice")
		require.NoError(t, rt.Sleep(ctx, runtime.HibernateAfter+time.Second))
		require.NoError(t, alice.Send("ping"))
		assert.Equal(t, "pong", receive(t, ctx, alice))
		at, ok := st.GetWebSocketAutoResponseTimestamp(st.GetWebSockets("")[0])
		assert.True(t, ok)
		assert.Equal(t, rt.Now(), at)
		return nil
	})
	assert.Equal(t, 1, built, "the auto-response did not wake the hibernated object")
	assert.NotContains(t, rt.Trace(), "websocket.message")
}

// W5: an upgrade whose 101 reply is lost leaves the caller with the
// ambiguous error, and its retry is refused as a duplicate (a fetch is
// never marked retryable). The object had accepted the socket; the caller's
// end went with the lost reply, so the object sees the connection drop, as
// workerd's hibernation manager sees a disconnected socket: WebSocketClose
// with 1006 and wasClean false, and the socket leaves its list.
func TestW5_ALostUpgradeReplyDropsTheConnection(t *testing.T) {
	var built int
	rt := newRuntime(t, runtime.WithFaults(transport.Plan(transport.Rule{Method: "fetch", Attempt: 1, Fault: transport.LoseResponse})))
	ns := rt.Namespace("ROOM", newChat(false, &built))
	run(t, rt, func(ctx context.Context) error {
		room, err := ns.GetByName("lobby")
		require.NoError(t, err)
		req, _ := http.NewRequest(http.MethodGet, "http://room/?name=alice", nil)
		_, err = room.Connect(ctx, req)
		var e *stub.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, transport.LoseResponse, e.Fault)
		members, err := stub.CallAs[int](ctx, mustGet(t, ns, "lobby"), "Members")
		require.NoError(t, err)
		assert.Zero(t, members, "the dropped socket left the object")
		return nil
	})
	calls := rt.Calls()
	require.NotEmpty(t, calls)
	assert.Len(t, calls[0].Attempts, 2, "the upgrade was retried once, and refused as a duplicate")
	assert.Contains(t, rt.Trace(), `websocket.close socket=ws1 code=1006 dropped reason="WebSocket disconnected without sending Close frame."`)
}

func mustGet(t *testing.T, ns *runtime.Namespace, name string) *stub.Stub {
	t.Helper()
	s, err := ns.GetByName(name)
	require.NoError(t, err)
	return s
}

// A response that carries a socket must be a 101 to a request that asked
// for the upgrade, as on the platform; Connect says what it got instead.
func TestW1_AnUpgradeMustBeAskedForAndAnswered101(t *testing.T) {
	var built int
	rt := newRuntime(t)
	ns := rt.Namespace("ROOM", newChat(false, &built))
	run(t, rt, func(ctx context.Context) error {
		room := mustGet(t, ns, "lobby")
		req, _ := http.NewRequest(http.MethodGet, "http://room/?name=a", nil)
		resp, err := room.Fetch(ctx, req) // no Upgrade header: the handler's Upgrade fails, 500
		require.NoError(t, err)
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		_, ok := object.WebSocketOf(resp)
		assert.False(t, ok)
		return nil
	})
}

// D1: the same seed gives the same trace, sockets and all.
func TestD1_AWebSocketRunIsDeterministic(t *testing.T) {
	trace := func() string {
		var built int
		rt := newRuntime(t, runtime.WithSeed(7), runtime.WithFaults(transport.Plan().WithLatency(transport.Latency{P50: 5 * time.Millisecond, P99: 50 * time.Millisecond})))
		ns := rt.Namespace("ROOM", newChat(false, &built))
		run(t, rt, func(ctx context.Context) error {
			room := mustGet(t, ns, "lobby")
			a, b := join(t, ctx, room, "a"), join(t, ctx, room, "b")
			for _, m := range []string{"1", "2", "3"} {
				require.NoError(t, a.Send(m))
				require.NoError(t, b.Send(m))
			}
			for range 6 {
				receive(t, ctx, a)
			}
			return nil
		})
		return rt.Trace()
	}
	first := trace()
	assert.Equal(t, first, trace())
	assert.Contains(t, first, "websocket.message")
}

// slowRoom answers each message after 20 s of work: longer than
// HibernateAfter.
type slowRoom struct{ st *object.State }

func (slowRoom) Methods() object.Methods { return object.Methods{} }

func (r slowRoom) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	client, server := object.NewWebSocketPair()
	if err := r.st.AcceptWebSocket(server); err != nil {
		panic(err)
	}
	if err := object.Upgrade(w, client); err != nil {
		panic(err)
	}
}

func (r slowRoom) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	if err := r.st.Sleep(ctx, 20*time.Second); err != nil {
		return err
	}
	return ws.Send("done " + msg.Text)
}

// W4: a socket's turn under way keeps its object from hibernating, however
// long it runs; once idle 10 s after it, the object hibernates.
func TestW4_ATurnUnderWayKeepsTheObjectAwake(t *testing.T) {
	var built int
	rt := newRuntime(t)
	ns := rt.Namespace("SLOW", func(st *object.State) object.Object { built++; return slowRoom{st: st} })
	run(t, rt, func(ctx context.Context) error {
		req, _ := http.NewRequest(http.MethodGet, "http://slow/", nil)
		ws, err := mustGet(t, ns, "s").Connect(ctx, req)
		require.NoError(t, err)
		require.NoError(t, ws.Send("1"))
		assert.Equal(t, "done 1", receive(t, ctx, ws))
		assert.NotContains(t, rt.Trace(), "evicted", "not evicted while the turn ran")
		require.NoError(t, rt.Sleep(ctx, runtime.HibernateAfter+time.Second))
		require.NoError(t, ws.Send("2"))
		assert.Equal(t, "done 2", receive(t, ctx, ws))
		assert.Contains(t, rt.Trace(), "evicted")
		assert.Equal(t, 2, built, "hibernated once idle")
		return nil
	})
}

// logRoom logs what reaches it, by socket, and echoes each message back.
type logRoom struct {
	st  *object.State
	log *[]string
}

func (logRoom) Methods() object.Methods { return object.Methods{} }

func (l logRoom) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client, server := object.NewWebSocketPair()
	if err := l.st.AcceptWebSocket(server, r.URL.Query().Get("name")); err != nil {
		panic(err)
	}
	if err := object.Upgrade(w, client); err != nil {
		panic(err)
	}
}

func (l logRoom) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	*l.log = append(*l.log, l.st.GetTags(ws)[0]+msg.Text)
	return ws.Send(msg.Text)
}

func (l logRoom) WebSocketClose(ctx context.Context, ws *object.WebSocket, code int, reason string, wasClean bool) error {
	*l.log = append(*l.log, fmt.Sprintf("close %d %q clean=%v", code, reason, wasClean))
	return nil
}

// connectAs opens a socket to the log room as name.
func connectAs(t *testing.T, ctx context.Context, ns *runtime.Namespace, name string) *object.WebSocket {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://log/?name="+name, nil)
	ws, err := mustGet(t, ns, "log").Connect(ctx, req)
	require.NoError(t, err)
	return ws
}

var wsLatency = transport.Plan().WithLatency(transport.Latency{P50: 5 * time.Millisecond, P99: 50 * time.Millisecond})

// W5: with link latency, messages of one socket arrive in the order they
// were sent, both ways; messages of two sockets overtake one another.
func TestW5_LatencyReordersAcrossSocketsNeverWithinOne(t *testing.T) {
	overtaken := 0
	for seed := uint64(1); seed <= 20; seed++ {
		var log []string
		rt := newRuntime(t, runtime.WithSeed(seed), runtime.WithFaults(wsLatency))
		ns := rt.Namespace("LOG", func(st *object.State) object.Object { return logRoom{st: st, log: &log} })
		run(t, rt, func(ctx context.Context) error {
			a, b := connectAs(t, ctx, ns, "a"), connectAs(t, ctx, ns, "b")
			for i := range 10 {
				require.NoError(t, a.Send(strconv.Itoa(i)))
				require.NoError(t, b.Send(strconv.Itoa(i)))
			}
			for i := range 10 {
				assert.Equal(t, strconv.Itoa(i), receive(t, ctx, a), "seed %d: a's echoes in order", seed)
				assert.Equal(t, strconv.Itoa(i), receive(t, ctx, b), "seed %d: b's echoes in order", seed)
			}
			return nil
		})
		var as, bs []string
		for _, e := range log {
			if e[0] == 'a' {
				as = append(as, e[1:])
			} else {
				bs = append(bs, e[1:])
			}
		}
		want := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
		assert.Equal(t, want, as, "seed %d: a's messages reach the object in order", seed)
		assert.Equal(t, want, bs, "seed %d: b's messages reach the object in order", seed)
		if log[0] != "a0" || log[1] != "b0" || log[2] != "a1" {
			overtaken++
		}
	}
	assert.Positive(t, overtaken, "latency reorders messages of different sockets")
}

// W5: a connection that drops loses what is on its wire; the client's
// Receive ends with 1006, and the object's WebSocketClose gets 1006, the
// platform's reason and wasClean false; the socket leaves the object.
func TestW5_ADroppedConnectionClosesBothEnds(t *testing.T) {
	var log []string
	rt := newRuntime(t, runtime.WithSeed(3), runtime.WithFaults(wsLatency))
	var st *object.State
	ns := rt.Namespace("LOG", func(s *object.State) object.Object { st = s; return logRoom{st: s, log: &log} })
	run(t, rt, func(ctx context.Context) error {
		a := connectAs(t, ctx, ns, "a")
		require.NoError(t, a.Send("lost"))
		require.NoError(t, a.Disconnect())
		_, err := a.Receive(ctx)
		var closed *object.CloseError
		require.ErrorAs(t, err, &closed)
		assert.Equal(t, 1006, closed.Code)
		require.NoError(t, rt.Sleep(ctx, time.Second))
		assert.Empty(t, st.GetWebSockets(""))
		return nil
	})
	assert.Equal(t, []string{`close 1006 "WebSocket disconnected without sending Close frame." clean=false`}, log)
}

// W5: the fault drop-connection, drawn as a message is sent, drops the
// connection: the message is lost, the client's Receive ends with 1006,
// the object's WebSocketClose gets 1006 and wasClean false, the client's
// later sends are lost without an error (a browser's send on a closed
// socket), and the trace names the fault; a seed drops the same messages
// on every run.
func TestW5_ADrawnDropClosesBothEndsAndIsTraced(t *testing.T) {
	trace := func() (string, []string) {
		var log []string
		rt := newRuntime(t, runtime.WithSeed(5), runtime.WithFaults(transport.Random(transport.Rates{transport.DropConnection: 1})))
		ns := rt.Namespace("LOG", func(s *object.State) object.Object { return logRoom{st: s, log: &log} })
		run(t, rt, func(ctx context.Context) error {
			a := connectAs(t, ctx, ns, "a")
			require.NoError(t, a.Send("lost"))
			_, err := a.Receive(ctx)
			var closed *object.CloseError
			require.ErrorAs(t, err, &closed)
			assert.Equal(t, 1006, closed.Code)
			assert.NoError(t, a.Send("after"), "a send on a dropped connection is lost, not refused")
			return rt.Sleep(ctx, time.Second)
		})
		return rt.Trace(), log
	}
	tr, log := trace()
	assert.Equal(t, []string{`close 1006 "WebSocket disconnected without sending Close frame." clean=false`}, log, "the message never reached the object")
	assert.Contains(t, tr, "websocket.drop socket=ws1 to=object fault=drop-connection")
	again, _ := trace()
	assert.Equal(t, tr, again)
}
