package runtime_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CallsTo finds the calls to one method of one namespace, EffectsOf the
// effects of one kind, in order, without a loop over Calls or Effects.
func TestCallsToAndEffectsOf(t *testing.T) {
	rt := runtime.New(runtime.WithSeed(1))
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
	adds := rt.CallsTo("INVENTORY", "AddOne")
	require.Len(t, adds, 2)
	assert.Equal(t, []any{"apple"}, adds[0].Args)
	assert.Equal(t, []any{"pear"}, adds[1].Args, "in the order the calls began")
	assert.Len(t, rt.CallsTo("MAILER", ""), 2, "every method of the namespace")
	gets := rt.CallsTo("", "Get")
	require.Len(t, gets, 1, "every namespace")
	assert.Equal(t, 1, gets[0].Result)
	assert.Empty(t, rt.CallsTo("INVENTORY", "Send"))
	assert.Len(t, rt.CallsTo("", ""), len(rt.Calls()))

	emails := rt.EffectsOf("email")
	require.Len(t, emails, 2)
	assert.Equal(t, examples.Email{To: "ada", Subject: "hi"}, emails[0].Payload)
	assert.Equal(t, examples.Email{To: "bob", Subject: "ho"}, emails[1].Payload)
	assert.Empty(t, rt.EffectsOf("charge"))
	adds[0].Args[0] = "changed"
	assert.Equal(t, []any{"apple"}, rt.CallsTo("INVENTORY", "AddOne")[0].Args, "each caller gets its own copy")
}
