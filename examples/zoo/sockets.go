package zoo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// The zoo's WebSocket bugs (rules W1-W5): each a small room of the kind a
// chat, a presence list or a vote over WebSockets is, with its fixed form.
// Their drivers connect through a reconnect loop (connect), let what was
// sent arrive (settle), and then read what each client received without
// waiting (inbox).

// settleFor is how long a driver lets messages travel before it reads
// what arrived: far past the link's latency, short of hibernation.
const settleFor = 5 * time.Second

// connect opens a WebSocket to the object name of ns at path, calling
// again (a new stub each time) while the upgrade fails, up to 20 times,
// as a client's reconnect loop does. A nil socket means every try failed.
func connect(ctx context.Context, ns *runtime.Namespace, name, path string) (*object.WebSocket, error) {
	for range 20 {
		s, err := ns.GetByName(name)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequest(http.MethodGet, "http://room"+path, nil)
		if err != nil {
			return nil, err
		}
		if ws, err := s.Connect(ctx, req); err == nil {
			return ws, nil
		}
	}
	return nil, nil
}

// inbox is what ws received, read without waiting, and whether its
// connection dropped (code 1006: the fault drop-connection, or a lost
// 101 reply).
func inbox(ctx context.Context, ws *object.WebSocket) (texts []string, dropped bool, err error) {
	now, cancel := context.WithCancel(ctx)
	cancel() // Receive returns what arrived, then ends
	for {
		m, err := ws.Receive(now)
		var closed *object.CloseError
		switch {
		case errors.As(err, &closed):
			return texts, closed.Code == 1006, nil
		case errors.Is(err, context.Canceled):
			return texts, false, nil
		case err != nil:
			return texts, false, err
		}
		texts = append(texts, m.Text)
	}
}

// Presence keeps who is present in storage: a connection is added as its
// socket is accepted (key present:N, N kept as the socket's attachment)
// and removed as it closes. Buggy, it removes a connection only on a
// clean close, so one that dropped (1006) stays present for ever: a lost
// 101 reply leaves an orphan no client has. Fixed, any close removes it,
// unless another open socket holds the same number (a join whose writes
// failed gave it to the next join too), as examples.Chat keeps a member
// that joined again.
type Presence struct {
	st    *object.State
	fixed bool
}

// Methods lists Present (marked Retryable: a read).
func (p *Presence) Methods() object.Methods {
	return object.Methods{"Present": object.Retryable(p.Present)}
}

// ServeHTTP accepts a connection and records it as present.
func (p *Presence) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, storage := r.Context(), p.st.Storage()
	var n int
	if _, err := storage.Get(ctx, "joins", &n); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	n++
	if err := storage.Put(ctx, "joins", n); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if err := storage.Put(ctx, fmt.Sprintf("present:%d", n), true); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	client, server := object.NewWebSocketPair()
	if err := p.st.AcceptWebSocket(server); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if err := server.SerializeAttachment(n); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = object.Upgrade(w, client)
}

// WebSocketClose removes the connection from the present ones.
func (p *Presence) WebSocketClose(ctx context.Context, ws *object.WebSocket, code int, reason string, wasClean bool) error {
	if !p.fixed && !wasClean {
		return nil // the bug: a dropped connection is still "present"
	}
	n := p.number(ws)
	for _, other := range p.st.GetWebSockets("") {
		if other != ws && p.number(other) == n {
			// A join whose writes were lost (a write that failed) gave
			// the next one the same number: that one is still here.
			return nil
		}
	}
	_, err := p.st.Storage().Delete(ctx, fmt.Sprintf("present:%d", n))
	return err
}

// number is the connection number ws was accepted under.
func (p *Presence) number(ws *object.WebSocket) int {
	var n int
	_, _ = ws.DeserializeAttachment(&n)
	return n
}

// Present counts the connections present.
func (p *Presence) Present(ctx context.Context) (int, error) {
	es, err := p.st.Storage().List(ctx, object.ListOptions{Prefix: "present:"})
	return len(es), err
}

// joinOnce connects one client and checks that the object counts as
// present exactly the connections it holds.
func joinOnce(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		var st *object.State
		ns := rt.Namespace("PRESENCE", func(s *object.State) object.Object { st = s; return &Presence{st: s, fixed: fixed} })
		if _, err := connect(ctx, ns, "lobby", "/"); err != nil {
			return err
		}
		if err := rt.Sleep(ctx, settleFor); err != nil { // the drops' closes run
			return err
		}
		n, err := readInt(ctx, ns, "lobby", "Present")
		if err != nil || st == nil {
			return nil // the read failed: nothing to check
		}
		if open := len(st.GetWebSockets("")); n != open {
			return fmt.Errorf("the room lists %d connections as present and holds %d sockets: a connection whose 101 reply was lost dropped and stayed present", n, open)
		}
		return nil
	}
}

var orphanPresence = Bug{
	Name: "orphan-presence", Kind: "an orphan left by a lost upgrade reply",
	Needs:     "one fault: the upgrade's 101 reply lost (lose-response, or a write that fails): the connection drops and its close is not clean",
	Elsewhere: "examples.Chat closes a member's earlier socket when it joins again",
	Buggy:     joinOnce(false), Fixed: joinOnce(true), FoundBy: FoundByRandom,
}

// Megaphone broadcasts each message to its members. Buggy, it keeps its
// members in a field as it accepts them, which hibernation empties: after
// a wake, the broadcast skips every socket accepted before it. Fixed, it
// broadcasts to the sockets the platform keeps (State.GetWebSockets).
type Megaphone struct {
	st      *object.State
	fixed   bool
	members []*object.WebSocket
}

// Methods lists none: the room is all WebSockets.
func (m *Megaphone) Methods() object.Methods { return object.Methods{} }

// ServeHTTP accepts a member.
func (m *Megaphone) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client, server := object.NewWebSocketPair()
	if err := m.st.AcceptWebSocket(server); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	m.members = append(m.members, server)
	_ = object.Upgrade(w, client)
}

// WebSocketMessage sends the message to every member.
func (m *Megaphone) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	to := m.members
	if m.fixed {
		to = m.st.GetWebSockets("")
	}
	for _, s := range to {
		_ = s.Send(msg.Text)
	}
	return nil
}

// shoutAfterAWake connects ada and bob, lets the room hibernate, has ada
// send, and checks that both hear her unless a connection dropped.
func shoutAfterAWake(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("MEGAPHONE", func(s *object.State) object.Object { return &Megaphone{st: s, fixed: fixed} })
		return speakAfterAWake(ctx, rt, ns, "hi", func(heard string) bool { return heard == "hi" },
			"the room broadcast ada's message to a list kept in a field, which hibernation emptied")
	}
}

// speakAfterAWake connects ada and bob to ns's object "room", waits past
// hibernation, has ada send text, and checks that both heard what good
// accepts, unless a connection dropped (then nothing is claimed).
func speakAfterAWake(ctx context.Context, rt *runtime.Runtime, ns *runtime.Namespace, text string, good func(string) bool, why string) error {
	var members []*object.WebSocket
	for range 2 {
		ws, err := connect(ctx, ns, "room", "/")
		if err != nil || ws == nil {
			return err // every try failed: nothing to check
		}
		members = append(members, ws)
	}
	if err := rt.Sleep(ctx, runtime.HibernateAfter+time.Second); err != nil { // the room hibernates
		return err
	}
	if err := members[0].Send(text); err != nil {
		return err
	}
	if err := rt.Sleep(ctx, settleFor); err != nil {
		return err
	}
	for i, ws := range members {
		got, dropped, err := inbox(ctx, ws)
		if err != nil || dropped {
			return err
		}
		if len(got) != 1 || !good(got[0]) {
			return fmt.Errorf("after a wake, member %d of 2 received %q for ada's %q: %s", i+1, got, text, why)
		}
	}
	return nil
}

var broadcastAfterWake = Bug{
	Name: "broadcast-after-wake", Kind: "a broadcast list in a field, emptied by hibernation",
	Needs:     "no fault: the room hibernates after 10 s idle (rule W4)",
	Elsewhere: "examples.Chat broadcasts to State.GetWebSockets",
	Buggy:     shoutAfterAWake(false), Fixed: shoutAfterAWake(true), FoundBy: FoundByRandom,
}

// Podium names each message with the room's topic, which the first
// message sets ("/topic NAME"). Buggy, it keeps the topic in a field,
// which a wake loses: messages after it carry no topic. Fixed, it keeps
// the topic in storage.
type Podium struct {
	st    *object.State
	fixed bool
	topic string
}

// Methods lists none: the room is all WebSockets.
func (s *Podium) Methods() object.Methods { return object.Methods{} }

// ServeHTTP accepts a member.
func (s *Podium) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client, server := object.NewWebSocketPair()
	if err := s.st.AcceptWebSocket(server); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = object.Upgrade(w, client)
}

// WebSocketMessage sets the topic ("/topic NAME", answered to its sender)
// or broadcasts "[TOPIC] text".
func (s *Podium) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	if topic, ok := strings.CutPrefix(msg.Text, "/topic "); ok {
		s.topic = topic
		if s.fixed {
			if err := s.st.Storage().Put(ctx, "topic", topic); err != nil {
				return err
			}
		}
		return ws.Send("topic " + topic)
	}
	topic := s.topic
	if s.fixed {
		if _, err := s.st.Storage().Get(ctx, "topic", &topic); err != nil {
			return err
		}
	}
	for _, m := range s.st.GetWebSockets("") {
		_ = m.Send("[" + topic + "] " + msg.Text)
	}
	return nil
}

// topicAfterAWake sets the topic, then checks that a message after a
// wake carries it.
func topicAfterAWake(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("PODIUM", func(s *object.State) object.Object { return &Podium{st: s, fixed: fixed} })
		host, err := connect(ctx, ns, "room", "/")
		if err != nil || host == nil {
			return err
		}
		if err := host.Send("/topic lobby"); err != nil {
			return err
		}
		if err := rt.Sleep(ctx, settleFor); err != nil {
			return err
		}
		if got, dropped, err := inbox(ctx, host); err != nil || dropped || len(got) != 1 {
			return err // the topic was not set: nothing to check
		}
		return speakAfterAWake(ctx, rt, ns, "hi", func(heard string) bool { return heard == "[lobby] hi" },
			"the topic was kept in a field, which the wake lost")
	}
}

var fieldLostOnWake = Bug{
	Name: "field-lost-on-wake", Kind: "state kept in a field, lost when the object wakes",
	Needs:     "no fault: the room hibernates after 10 s idle (rule W4)",
	Elsewhere: "examples.Chat keeps a member's name in its socket's attachment; examples.Session",
	Buggy:     topicAfterAWake(false), Fixed: topicAfterAWake(true), FoundBy: FoundByRandom,
}

// Ballot counts votes sent over WebSockets ("vote ID"), each answered
// "ok ID". Buggy, it counts every vote it receives, so a client that
// resends its vote after its connection dropped before the answer came
// (the vote was counted) is counted twice. Fixed, it remembers each vote's
// ID and counts it once.
type Ballot struct {
	st    *object.State
	fixed bool
}

// Methods lists Votes (marked Retryable: a read).
func (b *Ballot) Methods() object.Methods {
	return object.Methods{"Votes": object.Retryable(b.Votes)}
}

// ServeHTTP accepts a voter.
func (b *Ballot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client, server := object.NewWebSocketPair()
	if err := b.st.AcceptWebSocket(server); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = object.Upgrade(w, client)
}

// WebSocketMessage counts a vote and answers it.
func (b *Ballot) WebSocketMessage(ctx context.Context, ws *object.WebSocket, msg object.Message) error {
	id, ok := strings.CutPrefix(msg.Text, "vote ")
	if !ok {
		return ws.Send("unknown " + msg.Text)
	}
	storage := b.st.Storage()
	if b.fixed {
		seen, err := storage.Get(ctx, "voted:"+id, new(bool))
		if err != nil {
			return err
		}
		if seen {
			return ws.Send("ok " + id)
		}
		if err := storage.Put(ctx, "voted:"+id, true); err != nil {
			return err
		}
	}
	var n int
	if _, err := storage.Get(ctx, "votes", &n); err != nil {
		return err
	}
	if err := storage.Put(ctx, "votes", n+1); err != nil {
		return err
	}
	return ws.Send("ok " + id)
}

// Votes returns the count.
func (b *Ballot) Votes(ctx context.Context) (int, error) {
	var n int
	_, err := b.st.Storage().Get(ctx, "votes", &n)
	return n, err
}

// voteUntilAnswered sends one vote, and while no answer comes (the
// connection dropped, or the vote was lost with it) connects again and
// resends it, as a client's reconnect-and-resend loop does; then checks
// that the ballot counted it at most once.
func voteUntilAnswered(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("BALLOT", func(s *object.State) object.Object { return &Ballot{st: s, fixed: fixed} })
		for range 5 {
			ws, err := connect(ctx, ns, "poll", "/")
			if err != nil || ws == nil {
				return err
			}
			if err := ws.Send("vote v-1"); err != nil {
				return err
			}
			if err := rt.Sleep(ctx, settleFor); err != nil {
				return err
			}
			got, _, err := inbox(ctx, ws)
			if err != nil {
				return err
			}
			if len(got) > 0 && got[0] == "ok v-1" {
				break
			}
		}
		n, err := readInt(ctx, ns, "poll", "Votes")
		if err == nil && n > 1 {
			return fmt.Errorf("one vote, resent after its connection dropped, was counted %d times", n)
		}
		return nil
	}
}

var resentMessage = Bug{
	Name: "resent-message", Kind: "a message handler not idempotent across a reconnect-and-resend",
	Needs:     "one fault: drop-connection on the answer, after the vote was counted",
	Elsewhere: "marked-without-key (the same bug on a call's retry)",
	Buggy:     voteUntilAnswered(false), Fixed: voteUntilAnswered(true), FoundBy: FoundByRandom,
}
