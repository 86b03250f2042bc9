package scenario

// The resolve pass over a socket step (rules W1-W5): the socket a fetch
// before it opened, and one thing to do on it.

import (
	"slices"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/quote"
)

// defaultWithin is how long a receive step waits for its message.
const defaultWithin = 10 * time.Second

// resolveSocket resolves a socket step; nil when it has a problem.
func (p *parser) resolveSocket(r *rawSocket, path string) *SocketStep {
	if !p.shape(r.shape) {
		return nil
	}
	st := &SocketStep{Path: path, Line: r.at.Line, Within: defaultWithin}
	name, ok := p.name(r.name, path+".socket")
	if !ok {
		return nil
	}
	if !slices.Contains(p.sockets, name) {
		opened := "none"
		if len(p.sockets) > 0 {
			opened = strings.Join(p.sockets, ", ")
		}
		p.errorf(r.name.n, path+".socket", nil, "unknown socket %s: a fetch before this step opens it (fetch: {path: ..., websocket: %s}); opened so far: %s", quote.Q(name), name, opened)
		return nil
	}
	st.Name = name
	var ops []string
	for _, op := range []struct {
		name  string
		given bool
	}{{"send", r.send.given()}, {"receive", r.receiveN != nil}, {"close", r.closeN != nil}, {"disconnect", r.disconnect.given()}} {
		if op.given {
			ops = append(ops, op.name)
		}
	}
	if len(ops) != 1 {
		got := "none"
		if len(ops) > 0 {
			got = strings.Join(ops, ", ")
		}
		p.errorf(r.at, path, nil, "a socket step does one thing: send, receive, close or disconnect; this one gives %s", got)
		return nil
	}
	if r.within.given() && ops[0] != "receive" {
		p.errorf(r.within.n, path+".within", nil, "only a receive waits: drop within, or receive")
		return nil
	}
	switch ops[0] {
	case "send":
		st.Send = true
		st.Text, ok = p.str(r.send, path+".send")
	case "receive":
		ok = p.socketReceive(r, path, st)
	case "close":
		ok = p.socketClose(r, path, st)
	case "disconnect":
		var v bool
		v, ok = p.boolean(r.disconnect, path+".disconnect")
		if ok && !v {
			p.errorf(r.disconnect.n, path+".disconnect", nil, "is false: write disconnect: true to drop the connection, or leave the step out")
			ok = false
		}
		st.Disconnect = true
	}
	if !ok {
		return nil
	}
	return st
}

// socketReceive resolves a receive: a text, or {closed: CODE}, and how
// long to wait.
func (p *parser) socketReceive(r *rawSocket, path string, st *SocketStep) bool {
	st.Receive = true
	ok := true
	if r.receiveShape != nil {
		if !p.shape(r.receiveShape) || !p.require(r.receiveShape, "closed", r.receiveN) {
			return false
		}
		st.Closed, ok = p.integer(r.closed, path+".receive.closed", 1000, 4999)
	} else {
		st.Text, ok = p.str(r.receive, path+".receive")
	}
	if r.within.given() {
		d, good := p.duration(r.within, path+".within")
		if good && d <= 0 {
			p.errorf(r.within.n, path+".within", nil, "is 0: want how long to wait, such as 1s")
			good = false
		}
		st.Within = d
		ok = ok && good
	}
	return ok
}

// socketClose resolves a close: a code (default 1000) the platform
// accepts and a reason of at most 123 bytes.
func (p *parser) socketClose(r *rawSocket, path string, st *SocketStep) bool {
	st.Close, st.Code = true, 1000
	if !p.shape(r.closeShape) {
		return false
	}
	ok := true
	if r.code.given() {
		st.Code, ok = p.integer(r.code, path+".close.code", 1000, 4999)
		if ok && (st.Code == 1004 || st.Code == 1005 || st.Code == 1006 || st.Code == 1015) {
			p.errorf(r.code.n, path+".close.code", nil, "%d is kept by the WebSocket protocol: want 1000 to 4999 but 1004, 1005, 1006 and 1015 (the platform's words: Invalid WebSocket close code: %d.)", st.Code, st.Code)
			ok = false
		}
	}
	if r.reason.given() {
		v, good := p.str(r.reason, path+".close.reason")
		if good && len(v) > 123 {
			p.errorf(r.reason.n, path+".close.reason", nil, "is %d bytes: want at most 123 (the platform's words: WebSocket close reason must not be longer than 123 bytes when UTF-8 encoded.)", len(v))
			good = false
		}
		st.Reason = v
		ok = ok && good
	}
	return ok
}
