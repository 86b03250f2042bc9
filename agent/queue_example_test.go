package agent_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// mailer sends mail from its queue; one address bounces every time.
type mailer struct {
	agent.Agent
	st *object.State
}

func (m *mailer) Methods() object.Methods {
	return object.Methods{
		"SendAll": object.Func(m.SendAll),
		"Send":    object.Func(m.Send),
	}
}

// SendAll queues one mail per address and returns at once.
func (m *mailer) SendAll(ctx context.Context, to []string) error {
	for _, addr := range to {
		_, err := m.Queue(ctx, "Send", addr, agent.TaskOptions{
			Retry:      agent.RetryOptions{MaxAttempts: new(2)},
			DeadLetter: true,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Send is the queue's callback.
func (m *mailer) Send(ctx context.Context, addr string) error {
	if addr == "nobody@example.com" {
		return errors.New("mailbox unavailable")
	}
	fmt.Println("sent to", addr)
	return nil
}

// OnError hears of every item whose attempts ran out.
func (m *mailer) OnError(ctx context.Context, err error) {
	fmt.Println("OnError:", err)
	letters, _ := m.ListDeadLetters(ctx)
	for _, l := range letters {
		fmt.Println("dead letter", l.ID, l.Task.Payload, l.Err)
	}
}

// Queue runs a method of the object for each item, in order and one at a
// time, with retries; the item leaves the queue when done, or when its
// attempts run out (to the dead-letter store, here).
func ExampleAgent_Queue() {
	rt := runtime.New(runtime.WithSeed(3))
	defer rt.Close()
	ns := rt.Namespace("MAILER", func(st *object.State) object.Object { return &mailer{st: st} })
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("news")
		if err != nil {
			return err
		}
		_, err = stub.CallAs[any](ctx, s, "SendAll", []string{"ada@example.com", "nobody@example.com", "alan@example.com"})
		return err
	})
	fmt.Println(err, rt.Elapsed())
	// Output:
	// sent to ada@example.com
	// OnError: task q2 (queued Send): 2 attempt(s) failed, the last with: mailbox unavailable
	// dead letter d4 nobody@example.com mailbox unavailable
	// sent to alan@example.com
	// <nil> 110ms
}
