package examples

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
)

// Chores does background work, and shows what never settles (rule C8):
// each planted method has its fixed form beside it, and dosim explore,
// which lets background work go on to a horizon after the run, reports the
// planted ones (testdata/liveness).
//
//   - Poison(true) queues a delivery that always fails, and OnError
//     queues it again: a queue that never drains (planted). Poison(false)
//     queues one that OnError gives up on (the fix).
//   - WatchForever arms an alarm whose handler re-arms it every quarter
//     of an hour, for ever (planted); Watch(n) re-arms it n times, then
//     stops (the fix).
//   - Sprout makes an hourly schedule whose every run makes another
//     hourly (cron) one, opting out of the deduplication the Agents SDK
//     does by default (TaskOptions.Idempotent false): schedule rows that
//     grow without bound (planted); Tend
//     makes one hourly schedule that does its work and nothing more (the
//     fix).
//   - Kick makes an hourly schedule that arms an alarm whose handler
//     always fails: an alarm retried for ever (planted); KickOnce arms it
//     once (the fix).
type Chores struct {
	agent.Agent // Queue and Schedule
	st          *object.State
}

// NewChores is the Chores constructor for runtime.Namespace.
func NewChores(st *object.State) object.Object { return &Chores{st: st} }

// Methods lists Chores' methods; Deliver, Sprout, Grow, Tend, Sweep and
// Arm are callbacks of its queue and schedules.
func (c *Chores) Methods() object.Methods {
	return object.Methods{
		"Poison":       object.Func(c.Poison),
		"Deliver":      object.Func(c.Deliver),
		"WatchForever": object.Func(func(ctx context.Context) error { return c.watch(ctx, -1) }),
		"Watch":        object.Func(func(ctx context.Context, n int) error { return c.watch(ctx, n) }),
		"Sprout":       object.Func(func(ctx context.Context) error { return c.every(ctx, "Grow") }),
		"Grow": object.Func(func(ctx context.Context) error {
			_, err := c.Schedule(ctx, agent.Cron("@hourly"), "Sweep", nil, agent.TaskOptions{Idempotent: new(false)})
			return err
		}),
		"Tend":     object.Func(func(ctx context.Context) error { return c.every(ctx, "Sweep") }),
		"Sweep":    object.Func(c.Sweep),
		"Kick":     object.Func(func(ctx context.Context) error { return c.every(ctx, "Arm") }),
		"KickOnce": object.Func(c.Arm),
		"Arm":      object.Func(c.Arm),
		"Swept":    object.Retryable(c.Swept),
	}
}

// watchEvery is how often the watch's alarm fires.
const watchEvery = 15 * time.Minute

// errPoison is what the poisoned delivery always fails with.
var errPoison = errors.New("the endpoint refuses this payload")

// Parcel is a queued delivery. Deliver refuses it unless Fine; Again says
// OnError queues it again when its attempts run out.
type Parcel struct{ Fine, Again bool }

// poisonRetry is a delivery's retry policy: two attempts, up to two
// minutes apart.
var poisonRetry = agent.TaskOptions{Retry: agent.RetryOptions{MaxAttempts: new(2), BaseDelayMs: new(60_000), MaxDelayMs: new(120_000)}}

// Poison queues a delivery that always fails; again says whether OnError
// queues it again each time its attempts run out.
func (c *Chores) Poison(ctx context.Context, again bool) error {
	_, err := c.Queue(ctx, "Deliver", Parcel{Again: again}, poisonRetry)
	return err
}

// Deliver refuses the parcel unless it is fine.
func (c *Chores) Deliver(ctx context.Context, p Parcel) error {
	if p.Fine {
		return nil
	}
	return errPoison
}

// OnError queues a failed delivery again when it asks for that (the
// planted bug); else it gives up (the fix: a dead-letter store could keep
// it).
func (c *Chores) OnError(ctx context.Context, err error) {
	var te *agent.TaskError
	if !errors.As(err, &te) || te.Task.Callback != "Deliver" {
		return
	}
	var p Parcel
	b, jerr := json.Marshal(te.Task.Payload) // the stored payload, as plain data
	if jerr != nil || json.Unmarshal(b, &p) != nil || !p.Again {
		return
	}
	_, _ = c.Queue(ctx, "Deliver", p, poisonRetry)
}

// watch arms the alarm in a quarter of an hour, to be re-armed left more times (-1:
// for ever).
func (c *Chores) watch(ctx context.Context, left int) error {
	if err := c.st.Storage().Put(ctx, "watch-left", left); err != nil {
		return err
	}
	return c.st.SetAlarm(ctx, c.st.Now().Add(watchEvery))
}

// Alarm re-arms the watch while it has rounds left, and fails when the
// storage says the alarm is broken (Arm).
func (c *Chores) Alarm(ctx context.Context, info object.AlarmInfo) error {
	s := c.st.Storage()
	if broken, err := s.Get(ctx, "broken", new(bool)); err != nil || broken {
		return errors.New("the alarm's work fails")
	}
	var left int
	if found, err := s.Get(ctx, "watch-left", &left); err != nil || !found {
		return err
	}
	if left == 0 {
		_, err := s.Delete(ctx, "watch-left")
		return err
	}
	if left > 0 {
		left--
	}
	if err := s.Put(ctx, "watch-left", left); err != nil {
		return err
	}
	return c.st.SetAlarm(ctx, c.st.Now().Add(watchEvery))
}

// every schedules callback to run every hour.
func (c *Chores) every(ctx context.Context, callback string) error {
	_, err := c.Schedule(ctx, agent.Every(time.Hour), callback, nil)
	return err
}

// Sweep counts one round of the hourly chore.
func (c *Chores) Sweep(ctx context.Context) error {
	var n int
	if _, err := c.st.Storage().Get(ctx, "swept", &n); err != nil {
		return err
	}
	return c.st.Storage().Put(ctx, "swept", n+1)
}

// Swept returns how many rounds of the hourly chore ran.
func (c *Chores) Swept(ctx context.Context) (int, error) {
	var n int
	_, err := c.st.Storage().Get(ctx, "swept", &n)
	return n, err
}

// Arm marks the alarm broken and sets it for now.
func (c *Chores) Arm(ctx context.Context) error {
	if err := c.st.Storage().Put(ctx, "broken", true); err != nil {
		return err
	}
	return c.st.SetAlarm(ctx, c.st.Now())
}
