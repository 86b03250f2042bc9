package object_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// cleaner sets an alarm whose first delivery fails.
type cleaner struct{ st *object.State }

func (c *cleaner) Methods() object.Methods {
	return object.Methods{"Arm": object.Func(func(ctx context.Context) error {
		return c.st.SetAlarm(ctx, c.st.Now().Add(time.Minute))
	})}
}

func (c *cleaner) Alarm(ctx context.Context, info object.AlarmInfo) error {
	fmt.Println(c.st.Now().Format(time.TimeOnly), "alarm, retry", info.RetryCount)
	if info.RetryCount == 0 {
		return errors.New("disk busy")
	}
	return nil
}

// An alarm fires when virtual time reaches it; a failed delivery is
// retried 2 s later, then 4 s, 8 s ... (rule O6).
func ExampleState_SetAlarm() {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("CLEANER", func(st *object.State) object.Object { return &cleaner{st: st} })
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("tmp")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Arm")
		return err
	})
	fmt.Println(err, rt.Elapsed()) // Run does not wait for the alarm
	if err := rt.Advance(time.Hour); err != nil {
		fmt.Println(err)
	}
	// Output:
	// <nil> 0s
	// 00:01:00 alarm, retry 0
	// 00:01:02 alarm, retry 1
}
