package agent_test

import (
	"context"
	"time"

	"github.com/dosim/dosim/agent"
)

// The Go blocks of docs/objects.md's section on retries, schedules and
// queues, kept word for word so that they compile
// (cli.TestDocsCodeBlocksAreChecked finds them here).

type paymentAPI interface {
	Charge(ctx context.Context, cents int) (string, error)
}

type Gateway struct{ api paymentAPI }

func (g *Gateway) Charge(ctx context.Context, cents int) (string, error) {
	return agent.RetryValue(ctx, func(ctx context.Context, attempt int) (string, error) {
		return g.api.Charge(ctx, cents) // attempt is 1, 2, 3 ...
	}, agent.RetryOptions{MaxAttempts: new(5), BaseDelayMs: new(200)})
}

type Reminders struct {
	agent.Agent
}

func (r *Reminders) plan(ctx context.Context) {
	// each returns the stored agent.Task and an error
	r.Schedule(ctx, agent.After(90*time.Second), "Remind", "stretch")
	r.Schedule(ctx, agent.Cron("0 9 * * *"), "Remind", "stand-up") // also agent.At, agent.Every
	r.Queue(ctx, "Send", "ada@example.com", agent.TaskOptions{
		Retry:      agent.RetryOptions{MaxAttempts: new(2)},
		DeadLetter: true, // opt-in: keep it with its last error when its attempts run out
	})
}

var _ = (*Reminders).plan
