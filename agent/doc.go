// Package agent is dosim's Agents-SDK layer: retries with full-jitter
// backoff, a circuit breaker, schedules (a delay, an instant, cron, an
// interval), a queue, dead letters and OnError (rules A1-A7), after the
// Cloudflare Agents SDK's this.retry, this.schedule and this.queue.
//
// Retry and RetryValue work in any object turn (a method, an Alarm
// handler, a task callback); they find the object from ctx:
//
//	err := agent.Retry(ctx, func(ctx context.Context, attempt int) error {
//		return charge(ctx, card)
//	}, agent.RetryOptions{MaxAttempts: new(5)})
//
// Schedules and queues belong to an object whose class embeds Agent, as
// an Agents-SDK class extends Agent; their methods are the Agent's:
//
//	type Outbox struct {
//		agent.Agent
//		st *object.State
//	}
//
//	func (o *Outbox) Post(ctx context.Context, url string) error {
//		_, err := o.Queue(ctx, "Deliver", url, agent.TaskOptions{DeadLetter: true})
//		return err
//	}
//
// A task is stored in the object's storage (under object.ReservedPrefix)
// with its payload and options, so it survives a reset; the runtime runs
// it through the instance (object.TaskRunner, which the embedded Agent
// implements), in a turn of its own through the object's input gate. A
// class may also implement ErrorHandler (OnError, for the errors of its
// tasks) and RetryDefaulter (its own retry defaults).
//
// Circuit breakers (BreakerOptions) are runtime-wide: every call that
// names one shares it, across objects.
package agent
