package scenario

// The run of socket steps (rules W1-W5): the client ends the fetches
// opened, and what each step does on one.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/object"
)

// Received is what a receive step got: a message's text, or the close's
// code (Closed), or why it got nothing (Missing).
type Received struct {
	Step    *SocketStep
	Text    string
	Closed  int
	Missing string
}

// String says what the step got, as a failure reads it.
func (r Received) String() string {
	switch {
	case r.Missing != "":
		return r.Missing
	case r.Closed != 0:
		return "the close, code " + strconv.Itoa(r.Closed)
	}
	return quote.Q(r.Text)
}

// met reports whether the step got what it expects.
func (r Received) met() bool {
	if r.Missing != "" {
		return false
	}
	if r.Step.Closed != 0 {
		return r.Closed == r.Step.Closed
	}
	return r.Closed == 0 && r.Text == r.Step.Text
}

// want says what the step expects.
func (s *SocketStep) want() string {
	if s.Closed != 0 {
		return "the close, code " + strconv.Itoa(s.Closed)
	}
	return quote.Q(s.Text) + " within " + s.Within.String()
}

// opened keeps the client end a 101 response carries under name.
func (r *runner) opened(name string, resp *http.Response) {
	ws, ok := object.WebSocketOf(resp)
	if resp.StatusCode != http.StatusSwitchingProtocols || !ok {
		return
	}
	if r.sockets == nil {
		r.sockets = map[string]*object.WebSocket{}
	}
	r.sockets[name] = ws
}

// socket runs a socket step. A socket whose fetch did not open it (the
// fetch failed) does nothing, and a receive on it gets nothing.
func (r *runner) socket(ctx context.Context, st *SocketStep) error {
	ws := r.sockets[st.Name]
	if ws == nil {
		if st.Receive {
			r.res.Received = append(r.res.Received, Received{Step: st, Missing: "nothing: socket " + st.Name + " is not open (its fetch did not open it)"})
		}
		return nil
	}
	var err error
	switch {
	case st.Send:
		err = ws.Send(st.Text)
	case st.Close:
		err = ws.Close(st.Code, st.Reason)
	case st.Disconnect:
		err = ws.Disconnect()
	case st.Receive:
		return r.receive(ctx, ws, st)
	}
	if errors.Is(err, object.ErrWebSocket) {
		return nil // a send after close: as the platform, refused; the steps go on
	}
	return err
}

// receive waits for the next message on ws, at most st.Within of virtual
// time, and keeps what came.
func (r *runner) receive(ctx context.Context, ws *object.WebSocket, st *SocketStep) error {
	wait, cancel := context.WithCancel(ctx)
	g := r.rt.Group(wait)
	g.Go(func(ctx context.Context) error {
		if r.rt.Sleep(ctx, st.Within) == nil {
			cancel()
		}
		return nil
	})
	m, err := ws.Receive(wait)
	cancel()
	_ = g.Wait()
	got := Received{Step: st, Text: m.Text}
	var closed *object.CloseError
	switch {
	case errors.As(err, &closed):
		got.Closed = closed.Code
	case errors.Is(err, context.Canceled) && ctx.Err() == nil:
		got.Missing = "nothing within " + st.Within.String()
	case err != nil:
		return fmt.Errorf("%s: receive on socket %s: %w", st.Path, st.Name, err)
	}
	r.res.Received = append(r.res.Received, got)
	return nil
}

// checkReceived adds the receive steps that did not get what they expect
// to the failures.
func (r *Result) checkReceived() {
	for _, got := range r.Received {
		r.Checked++
		if got.met() {
			continue
		}
		st := got.Step
		r.Failures = append(r.Failures, Failure{File: r.Scenario.File, Line: st.Line, Path: st.Path + ".receive",
			Call: "socket " + st.Name, Want: st.want(), Got: got.String()})
	}
}
