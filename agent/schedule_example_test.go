package agent_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// reminders schedules calls to its own Remind method.
type reminders struct {
	agent.Agent
	st *object.State
}

func (r *reminders) Methods() object.Methods {
	return object.Methods{
		"Plan":   object.Func(r.Plan),
		"Remind": object.Func(r.Remind),
	}
}

// Plan schedules a one-shot reminder and a daily one.
func (r *reminders) Plan(ctx context.Context) ([]string, error) {
	if _, err := r.Schedule(ctx, agent.After(90*time.Second), "Remind", "stretch"); err != nil {
		return nil, err
	}
	if _, err := r.Schedule(ctx, agent.Cron("0 9 * * *"), "Remind", "stand-up"); err != nil {
		return nil, err
	}
	list, err := r.ListSchedules(ctx)
	var out []string
	for _, t := range list {
		out = append(out, fmt.Sprintf("%s %s %v at %s", t.ID, t.Kind, t.Payload, t.Time.Format(time.DateTime)))
	}
	return out, err
}

// Remind is the callback: it gets the payload as its argument.
func (r *reminders) Remind(ctx context.Context, what string) error {
	fmt.Println(r.st.Now().Format(time.DateTime), what)
	return nil
}

// Schedule runs a method of the object later: after a delay, at a time, on
// a cron expression or every interval. Schedules are background work: they
// run as virtual time reaches them.
func ExampleAgent_Schedule() {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("REMINDERS", func(st *object.State) object.Object { return &reminders{st: st} })
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("me")
		if err != nil {
			return err
		}
		planned, err := stub.CallAs[[]string](ctx, s, "Plan")
		for _, p := range planned {
			fmt.Println(p)
		}
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	if err := rt.Advance(34 * time.Hour); err != nil {
		fmt.Println(err)
	}
	// Output:
	// s1 delayed stretch at 2025-01-01 00:01:30
	// s2 cron stand-up at 2025-01-01 09:00:00
	// 2025-01-01 00:01:30 stretch
	// 2025-01-01 09:00:00 stand-up
	// 2025-01-02 09:00:00 stand-up
}
