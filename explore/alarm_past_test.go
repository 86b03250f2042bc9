package explore_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/require"
)

// pastArmer sets its alarm to a time long past, which the runtime makes
// now, and answers the alarm GetAlarm shows: the instant of its turn,
// though it reads no clock.
type pastArmer struct{ st *object.State }

func (p *pastArmer) Methods() object.Methods {
	return object.Methods{"Arm": object.Func(func(ctx context.Context) (int64, error) {
		if err := p.st.SetAlarm(ctx, time.Unix(0, 0)); err != nil {
			return 0, err
		}
		at, _, err := p.st.GetAlarm(ctx)
		return at.UnixNano(), err
	})}
}

func (p *pastArmer) Alarm(context.Context, object.AlarmInfo) error { return nil }

// O6, C1: a turn that sets its alarm to a time already past leaves it at
// its own instant, so that is a read of the clock: the checker, which
// memoises a step by its state and its input (the call and what the turn
// read), gave every later seed whose call reached the object at another
// instant the first seed's alarm and answer, and reported a violation no
// run had (a cry of wolf that depended on which seed a worker checked
// first).
func TestO6_ATurnThatSetsAPastAlarmIsCheckedAtItsOwnInstant(t *testing.T) {
	sum, err := explore.RunFunc(explore.Options{Seeds: 40, Workers: 1}, func(ctx context.Context, rt *runtime.Runtime) error {
		s, err := rt.Namespace("ARMER", func(st *object.State) object.Object { return &pastArmer{st: st} }).GetByName("a")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Arm")
		return nil
	})
	require.NoError(t, err)
	require.True(t, sum.Clean(), "%v", sum.Violations)
	require.Equal(t, 40, sum.Ran)
}
