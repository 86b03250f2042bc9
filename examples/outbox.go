package examples

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
)

// Outbox delivers webhooks through the object's queue, with the
// Agents-style retries of rule A6: Post queues a delivery and returns at
// once; the queue runs Deliver for each item in order, retrying a failed
// attempt after a full-jitter backoff; an item whose attempts run out goes
// to OnError and to the dead-letter store.
//
// The endpoint it posts to is simulated and flaky: it refuses the first
// attempt for every URL containing "flaky", and every attempt for one
// containing "down".
type Outbox struct {
	agent.Agent // Queue and the dead-letter store
	st          *object.State
}

// NewOutbox is the Outbox constructor for runtime.Namespace.
func NewOutbox(st *object.State) object.Object { return &Outbox{st: st} }

// Methods lists Outbox's methods. Deliver is the queue's callback.
func (o *Outbox) Methods() object.Methods {
	return object.Methods{
		"Post":      object.Func(o.Post), // queues another delivery each time: not idempotent
		"Deliver":   object.Func(o.Deliver),
		"Delivered": object.Retryable(o.Delivered),
	}
}

// errEndpoint is what the simulated endpoint answers when it refuses.
var errEndpoint = errors.New("endpoint answered 503")

// Post queues a delivery of body to url: up to 3 attempts, 100 ms backoff
// base, dead-lettered when they run out.
func (o *Outbox) Post(ctx context.Context, url, body string) (string, error) {
	t, err := o.Queue(ctx, "Deliver", Webhook{URL: url, Body: body}, agent.TaskOptions{
		Retry:      agent.RetryOptions{MaxAttempts: new(3), BaseDelayMs: new(100)},
		DeadLetter: true,
	})
	if err != nil {
		return "", err
	}
	return t.ID, nil
}

// Webhook is a queued delivery.
type Webhook struct {
	URL  string
	Body string
}

// Deliver posts one webhook to the simulated endpoint and records the post
// as an effect when the endpoint accepts it.
func (o *Outbox) Deliver(ctx context.Context, w Webhook) error {
	s := o.st.Storage()
	var tries int
	if _, err := s.Get(ctx, "tries/"+w.URL, &tries); err != nil {
		return err
	}
	tries++
	if err := s.Put(ctx, "tries/"+w.URL, tries); err != nil {
		return err
	}
	if strings.Contains(w.URL, "down") || (strings.Contains(w.URL, "flaky") && tries == 1) {
		return fmt.Errorf("POST %s: %w", w.URL, errEndpoint)
	}
	if err := o.st.Effect(ctx, "webhook", w); err != nil {
		return err
	}
	var n int
	if _, err := s.Get(ctx, "delivered", &n); err != nil {
		return err
	}
	return s.Put(ctx, "delivered", n+1)
}

// Delivered returns how many webhooks the endpoint accepted.
func (o *Outbox) Delivered(ctx context.Context) (int, error) {
	var n int
	_, err := o.st.Storage().Get(ctx, "delivered", &n)
	return n, err
}

// OnError receives a delivery whose attempts ran out; it is counted, and
// the dead-letter store keeps it for a re-drive.
func (o *Outbox) OnError(ctx context.Context, err error) {
	var n int
	if _, gerr := o.st.Storage().Get(ctx, "failed", &n); gerr == nil {
		_ = o.st.Storage().Put(ctx, "failed", n+1)
	}
}
