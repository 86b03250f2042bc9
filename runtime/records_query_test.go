package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Match selects a run's records, the same way for calls, effects, events
// and turns: by namespace, object, method, effect or event kind, in order,
// without a loop; a field a kind of record does not have selects none of
// it, and several Matches select what any of them does.
func TestMatchSelectsCallsEffectsEventsAndTurns(t *testing.T) {
	rt := runtime.New(runtime.WithSeed(1), runtime.WithHistory())
	defer rt.Close()
	inv := rt.Namespace("INVENTORY", examples.NewInventory)
	mail := rt.Namespace("MAILER", examples.NewMailer)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := inv.GetByName("shop")
		if err != nil {
			return err
		}
		m, err := mail.GetByName("m")
		if err != nil {
			return err
		}
		for _, c := range []struct {
			s interface {
				Call(context.Context, string, ...any) (any, error)
			}
			name string
			args []any
		}{{s, "AddOne", []any{"apple"}}, {m, "Send", []any{"ada", "hi"}}, {s, "AddOne", []any{"pear"}}, {s, "Get", []any{"apple"}}, {m, "Send", []any{"bob", "ho"}}} {
			if _, err := c.s.Call(ctx, c.name, c.args...); err != nil {
				return err
			}
		}
		return nil
	}))
	adds := rt.Calls(runtime.Match{Namespace: "INVENTORY", Method: "AddOne"})
	require.Len(t, adds, 2)
	assert.Equal(t, []any{"apple"}, adds[0].Args)
	assert.Equal(t, []any{"pear"}, adds[1].Args, "in the order the calls began")
	assert.Len(t, rt.Calls(runtime.Match{Namespace: "MAILER"}), 2, "every method of the namespace")
	gets := rt.Calls(runtime.Match{Method: "Get"})
	require.Len(t, gets, 1, "every namespace")
	assert.Equal(t, 1, gets[0].Result)
	assert.Empty(t, rt.Calls(runtime.Match{Namespace: "INVENTORY", Method: "Send"}))
	assert.Empty(t, rt.Calls(runtime.Match{Object: "elsewhere"}))
	assert.Len(t, rt.Calls(runtime.Match{Object: "m"}), 2, "by object")
	assert.Len(t, rt.Calls(runtime.Match{}), len(rt.Calls()))
	assert.Len(t, rt.Calls(runtime.Match{Method: "Get"}, runtime.Match{Namespace: "MAILER"}), 3, "any of several")
	assert.Empty(t, rt.Calls(runtime.Match{Effect: "email"}), "a call has no effect kind: none, not all")

	emails := rt.Effects(runtime.Match{Effect: "email"})
	require.Len(t, emails, 2)
	assert.Equal(t, examples.Email{To: "ada", Subject: "hi"}, emails[0].Payload)
	assert.Equal(t, examples.Email{To: "bob", Subject: "ho"}, emails[1].Payload)
	assert.Empty(t, rt.Effects(runtime.Match{Effect: "charge"}))
	assert.Empty(t, rt.Effects(runtime.Match{Method: "Send"}), "an effect has no method: none, not all")
	assert.Len(t, rt.Effects(runtime.Match{Object: "m"}), 2)
	adds[0].Args[0] = "changed"
	assert.Equal(t, []any{"apple"}, rt.Calls(runtime.Match{Namespace: "INVENTORY", Method: "AddOne"})[0].Args, "each caller gets its own copy")

	sends := rt.Turns(runtime.Match{Namespace: "MAILER", Method: "Send"})
	require.Len(t, sends, 2)
	assert.Equal(t, []any{"bob", "ho"}, sends[1].Args)
	assert.Len(t, rt.Turns(runtime.Match{Object: "shop"}), 3)

	require.NoError(t, rt.Advance(5*time.Minute)) // both idle objects are evicted (rule L5)
	require.Len(t, rt.Events(runtime.Match{Event: object.EventEvicted}), 2)
	evicted := rt.Events(runtime.Match{Event: object.EventEvicted, Object: "shop"})
	require.Len(t, evicted, 1)
	assert.Equal(t, "INVENTORY", evicted[0].Namespace)
	assert.Empty(t, rt.Events(runtime.Match{Event: object.EventReset}))
	assert.Empty(t, rt.Events(runtime.Match{Method: "Send"}), "an event has no method: none, not all")
}

// The deprecated CallsTo and EffectsOf answer as the Matches go fix
// rewrites them to.
func TestCallsToAndEffectsOfForwardToMatch(t *testing.T) {
	rt := runtime.New(runtime.WithSeed(1))
	defer rt.Close()
	mail := rt.Namespace("MAILER", examples.NewMailer)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		m, err := mail.GetByName("m")
		if err != nil {
			return err
		}
		_, err = m.Call(ctx, "Send", "ada", "hi")
		return err
	}))
	sends := rt.CallsTo("MAILER", "Send")
	require.Len(t, sends, 1)
	assert.Equal(t, []any{"ada", "hi"}, sends[0].Args)
	assert.Nil(t, rt.CallsTo("MAILER", "Nope"), "nil when nothing matches, as before")
	assert.Equal(t, rt.Calls(runtime.Match{Namespace: "MAILER", Method: "Send"}), sends)
	emails := rt.EffectsOf("email")
	require.Len(t, emails, 1)
	assert.Equal(t, examples.Email{To: "ada", Subject: "hi"}, emails[0].Payload)
	assert.Nil(t, rt.EffectsOf("charge"))
}

// ringer sets its alarm a second out when rung; its alarm does nothing.
type ringer struct{ st *object.State }

func (r *ringer) Methods() object.Methods {
	return object.Methods{"Ring": object.Func(func(ctx context.Context) error {
		return r.st.SetAlarm(ctx, r.st.Now().Add(time.Second))
	})}
}

func (r *ringer) Alarm(context.Context, object.AlarmInfo) error { return nil }

// A turn that no call began (an alarm's) is selected by its kind, as
// Match.Method says; a Match that selects nothing gives nil, as CallsTo
// and EffectsOf did.
func TestMatchSelectsATurnNoCallBeganByItsKind(t *testing.T) {
	rt := runtime.New(runtime.WithSeed(1), runtime.WithHistory())
	defer rt.Close()
	ns := rt.Namespace("RINGER", func(st *object.State) object.Object { return &ringer{st: st} })
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("r")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Ring")
		return err
	}))
	require.NoError(t, rt.Advance(2*time.Second))
	alarms := rt.Turns(runtime.Match{Method: "alarm"})
	require.Len(t, alarms, 1)
	assert.Equal(t, runtime.TurnAlarm, alarms[0].Kind)
	assert.Equal(t, "RINGER", alarms[0].Namespace)
	rings := rt.Turns(runtime.Match{Method: "Ring"})
	require.Len(t, rings, 1)
	assert.Equal(t, runtime.TurnRequest, rings[0].Kind)
	assert.Len(t, rt.Turns(), 2)

	assert.Nil(t, rt.Calls(runtime.Match{Method: "Nope"}))
	assert.Nil(t, rt.Effects(runtime.Match{Effect: "email"}))
	assert.Nil(t, rt.Events(runtime.Match{Event: object.EventReset}))
	assert.Nil(t, rt.Turns(runtime.Match{Method: "queue"}))
	assert.NotNil(t, rt.Effects(), "without a Match, an empty list, as before Match")
}
