package platformtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// wsLog is what an object's WebSocket handlers saw, as worker.js's wsLog.
type wsLog struct {
	Messages []string   `json:"messages"`
	Closes   []wsClosed `json:"closes"`
}

// wsClosed is a close as a handler or a client saw it.
type wsClosed struct {
	Code     int    `json:"code"`
	Reason   string `json:"reason"`
	WasClean bool   `json:"wasClean"`
}

// wsAttachment is worker.js's attachment: the member's name and room.
type wsAttachment struct {
	Name string `json:"name"`
	Room string `json:"room"`
}

func (w *world) ws(name string) *wsLog {
	if w.wsLogs == nil {
		w.wsLogs = map[string]*wsLog{}
	}
	if w.wsLogs[name] == nil {
		w.wsLogs[name] = &wsLog{Messages: []string{}, Closes: []wsClosed{}}
	}
	return w.wsLogs[name]
}

// ServeHTTP is worker.js's fetch: GET /ws accepts a socket with the tags
// and attachment the query gives.
func (m *mirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/ws" {
		http.Error(w, "no such path", http.StatusNotFound)
		return
	}
	client, server := object.NewWebSocketPair()
	var tags []string
	_ = json.Unmarshal([]byte(r.URL.Query().Get("tags")), &tags)
	if err := m.st.AcceptWebSocket(server, tags...); err != nil {
		panic(err)
	}
	if att := r.URL.Query().Get("att"); att != "" {
		var a wsAttachment
		_ = json.Unmarshal([]byte(att), &a)
		if err := server.SerializeAttachment(a); err != nil {
			panic(err)
		}
	}
	if err := object.Upgrade(w, client); err != nil {
		panic(err)
	}
}

func (m *mirror) attachment(ws *object.WebSocket) wsAttachment {
	var a wsAttachment
	_, _ = ws.DeserializeAttachment(&a)
	return a
}

// WebSocketMessage is worker.js's webSocketMessage.
func (m *mirror) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	a := m.attachment(ws)
	l := m.w.ws(a.Room)
	l.Messages = append(l.Messages, msg.Text)
	if msg.Text == "close-me" {
		return ws.Close(4000, "kick")
	}
	for _, o := range m.st.GetWebSockets("member") {
		if err := o.Send(a.Name + ": " + msg.Text); err != nil {
			return err
		}
	}
	return nil
}

// WebSocketClose is worker.js's webSocketClose.
func (m *mirror) WebSocketClose(ctx context.Context, ws *object.WebSocket, code int, reason string, wasClean bool) error {
	l := m.w.ws(m.attachment(ws).Room)
	l.Closes = append(l.Closes, wsClosed{Code: code, Reason: reason, WasClean: wasClean})
	return nil
}

func (m *mirror) wsInfo(ctx context.Context, name string) (map[string]any, error) {
	all := m.st.GetWebSockets("")
	tags, auto := [][]string{}, []bool{}
	for _, ws := range all {
		tags = append(tags, m.st.GetTags(ws))
		_, ok := m.st.GetWebSocketAutoResponseTimestamp(ws)
		auto = append(auto, ok)
	}
	l := m.w.ws(name)
	return map[string]any{"open": len(all), "members": len(m.st.GetWebSockets("member")), "tags": tags,
		"log": map[string]any{"messages": l.Messages, "closes": l.Closes}, "autoAnswered": auto}, nil
}

func (m *mirror) wsAuto(ctx context.Context, request, response string) error {
	m.st.SetWebSocketAutoResponse(request, response)
	return nil
}

// wsLimits is worker.js's wsLimits.
func (m *mirror) wsLimits(ctx context.Context) (map[string]any, error) {
	r := map[string]any{}
	_, s0 := object.NewWebSocketPair()
	r["tags11Same"] = attempt(nil, m.st.AcceptWebSocket(s0, strings.Split(strings.Repeat("t,", 10)+"t", ",")...))
	r["tags11SameGot"] = attempt(m.st.GetTags(s0), nil)
	_, s1 := object.NewWebSocketPair()
	tags := make([]string, 11)
	for i := range tags {
		tags[i] = "t" + itoa(i)
	}
	r["tags11"] = attempt(nil, m.st.AcceptWebSocket(s1, tags...))
	_, s2 := object.NewWebSocketPair()
	r["tag257"] = attempt(nil, m.st.AcceptWebSocket(s2, strings.Repeat("t", 257)))
	_, s3 := object.NewWebSocketPair()
	r["sendBeforeAccept"] = attempt(nil, s3.Send("x"))
	if err := m.st.AcceptWebSocket(s3); err != nil {
		return nil, err
	}
	for _, n := range []int{2046, 16382, 16383} {
		r["attachment"+itoa(n)] = attempt(nil, cut(s3.SerializeAttachment(strings.Repeat("a", n)), "'attachment' was"))
	}
	for _, c := range []int{999, 1001, 1004, 1005, 1006, 1015, 2999, 5000} {
		_, sc := object.NewWebSocketPair()
		if err := m.st.AcceptWebSocket(sc); err != nil {
			return nil, err
		}
		r["closeCode"+itoa(c)] = attempt(nil, sc.Close(c, ""))
	}
	r["closeReason124"] = attempt(nil, s3.Close(1000, strings.Repeat("r", 124)))
	r["acceptTwice"] = attempt(nil, m.st.AcceptWebSocket(s3))
	if err := s3.Close(1000, "done"); err != nil {
		return nil, err
	}
	r["sendAfterClose"] = attempt(nil, s3.Send("x"))
	return r, nil
}

// cut is err with its text cut before sep, as worker.js cuts the
// platform's: the attachment's size in bytes follows it.
func cut(err error, sep string) error {
	if err == nil {
		return nil
	}
	before, _, _ := strings.Cut(err.Error(), sep)
	return errors.New(before)
}

// wsClient is a client end with worker.js's next(): a message's text, or
// the close as {closed: {code, reason, wasClean}}, or "timeout" after 3 s
// (of virtual time).
type wsClient struct {
	ws     *object.WebSocket
	status int
	rt     *runtime.Runtime
}

func wsConnect(ctx context.Context, rt *runtime.Runtime, s *stub.Stub, room, user string, tags []string) (*wsClient, error) {
	t, _ := json.Marshal(tags)
	a, _ := json.Marshal(wsAttachment{Name: user, Room: room})
	q := url.Values{"tags": {string(t)}, "att": {string(a)}}
	req, err := http.NewRequest(http.MethodGet, "http://do/ws?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Upgrade", "websocket")
	resp, err := s.Fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	ws, ok := object.WebSocketOf(resp)
	if !ok {
		return nil, errors.New("no WebSocket in the response")
	}
	return &wsClient{ws: ws, status: resp.StatusCode, rt: rt}, nil
}

func (c *wsClient) next(ctx context.Context) any {
	wait, cancel := context.WithCancel(ctx)
	g := c.rt.Group(wait)
	g.Go(func(ctx context.Context) error {
		if c.rt.Sleep(ctx, 3*time.Second) == nil {
			cancel()
		}
		return nil
	})
	msg, err := c.ws.Receive(wait)
	cancel()
	_ = g.Wait()
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return "timeout"
	}
	var closed *object.CloseError
	if errors.As(err, &closed) {
		return map[string]any{"closed": wsClosed{Code: closed.Code, Reason: closed.Reason, WasClean: true}}
	}
	if err != nil {
		return err.Error()
	}
	return msg.Text
}

// websocketChat is worker.js's websocket-chat.
func websocketChat(ctx context.Context, e *env) (map[string]any, error) {
	s, err := e.get(e.name)
	if err != nil {
		return nil, err
	}
	r := map[string]any{}
	a, err := wsConnect(ctx, e.rt, s, e.name, "a", []string{"member", "user:a"})
	if err != nil {
		return nil, err
	}
	b, err := wsConnect(ctx, e.rt, s, e.name, "b", []string{"member", "user:b"})
	if err != nil {
		return nil, err
	}
	r["status"] = attempt([]int{a.status, b.status}, nil)
	if err := a.ws.Send("hi"); err != nil {
		return nil, err
	}
	r["bGot"] = attempt(b.next(ctx), nil)
	r["aGot"] = attempt(a.next(ctx), nil)
	r["info"] = attempt(s.Call(ctx, "WsInfo", e.name))
	if err := b.ws.Close(1000, "bye"); err != nil {
		return nil, err
	}
	r["bClosed"] = attempt(b.next(ctx), nil)
	r["afterClientClose"] = attempt(s.Call(ctx, "WsInfo", e.name))
	if err := a.ws.Send("close-me"); err != nil {
		return nil, err
	}
	r["aClosed"] = attempt(a.next(ctx), nil)
	r["afterObjectClose"] = attempt(s.Call(ctx, "WsInfo", e.name))
	return r, nil
}

// websocketDrop is worker.js's websocket-drop: there the client is
// another object, reset with the socket in its field; here the client end
// drops (WebSocket.Disconnect), which is what dosim makes of any
// connection that goes without a close frame (rule W5).
func websocketDrop(ctx context.Context, e *env) (map[string]any, error) {
	s, err := e.get(e.name)
	if err != nil {
		return nil, err
	}
	a, err := wsConnect(ctx, e.rt, s, e.name, "a", []string{"member"})
	if err != nil {
		return nil, err
	}
	r := map[string]any{"status": attempt(a.status, nil)}
	if err := a.ws.Disconnect(); err != nil {
		return nil, err
	}
	if err := e.rt.Sleep(ctx, 100*time.Millisecond); err != nil { // the close's turn runs
		return nil, err
	}
	r["after"] = attempt(s.Call(ctx, "WsInfo", e.name))
	return r, nil
}

// websocketAuto is worker.js's websocket-auto.
func websocketAuto(ctx context.Context, e *env) (map[string]any, error) {
	s, err := e.get(e.name)
	if err != nil {
		return nil, err
	}
	if _, err := s.Call(ctx, "WsAuto", "ping", "pong"); err != nil {
		return nil, err
	}
	a, err := wsConnect(ctx, e.rt, s, e.name, "a", []string{"member"})
	if err != nil {
		return nil, err
	}
	if err := a.ws.Send("ping"); err != nil {
		return nil, err
	}
	r := map[string]any{"got": attempt(a.next(ctx), nil)}
	r["info"] = attempt(s.Call(ctx, "WsInfo", e.name))
	return r, nil
}

// websocketWake is worker.js's websocket-wake.
func websocketWake(ctx context.Context, e *env) (map[string]any, error) {
	s, err := e.get(e.name)
	if err != nil {
		return nil, err
	}
	a, err := wsConnect(ctx, e.rt, s, e.name, "a", []string{"member"})
	if err != nil {
		return nil, err
	}
	r := map[string]any{"builtAtStart": attempt(s.Call(ctx, "Built"))}
	if err := e.rt.Sleep(ctx, 15*time.Second); err != nil {
		return nil, err
	}
	if err := a.ws.Send("after15s"); err != nil {
		return nil, err
	}
	r["gotAfter15s"] = attempt(a.next(ctx), nil)
	r["builtAfter15s"] = attempt(s.Call(ctx, "Built"))
	return r, nil
}
