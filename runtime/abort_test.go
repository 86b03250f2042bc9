package runtime_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// aborter writes, aborts, then tries to write again, keeping what that
// second write returned.
type aborter struct {
	st    *object.State
	field int
	after *error
}

func (a *aborter) Methods() object.Methods {
	return object.Methods{
		"Abort": object.Func(func(ctx context.Context, reason string) error {
			a.field = 1
			if err := a.st.Storage().Put(ctx, "before", 1); err != nil {
				return err
			}
			a.st.Abort(reason)
			*a.after = a.st.Storage().Put(ctx, "after", 1)
			return nil
		}),
		"Field": object.Func(func(ctx context.Context) (int, error) { return a.field, nil }),
	}
}

// L3: State.Abort is the platform's ctx.abort(reason). The running
// request's caller gets an error whose message is the reason (the
// platform's words when it is empty), flagged DurableObjectReset, neither
// remote nor retryable, after one attempt; the turn's unconfirmed write is
// lost, the write after Abort is refused, and the object resets (a new
// instance, fields lost). Expected values: real workerd 1.20261117.1, as
// issue 22 reports it (ctx.abort(reason) and ctx.abort(): the caller's
// err.message, durableObjectReset, neither remote nor retryable; the
// turn's unconfirmed writes lost).
func TestL3_AbortResetsTheObjectWithItsReason(t *testing.T) {
	for _, c := range []struct{ reason, msg string }{
		{"custom reason", "custom reason"},
		{"", "Application called abort() to reset Durable Object."},
	} {
		t.Run(c.msg, func(t *testing.T) {
			// A plan naming storage-write-fails (for a method never
			// called) makes storage keep its unconfirmed writes (L7).
			rt := newRuntime(t, writeFails("Never"))
			var after error
			built := 0
			ns := rt.Namespace("A", func(st *object.State) object.Object {
				built++
				return &aborter{st: st, after: &after}
			})
			s := mustStub(t, ns, "a")
			id := ns.IDFromName("a")
			var callErr error
			var field any
			run(t, rt, func(ctx context.Context) error {
				_, callErr = s.Call(ctx, "Abort", c.reason)
				var err error
				field, err = mustStub(t, ns, "a").Call(ctx, "Field")
				return err
			})
			var se *stub.Error
			require.ErrorAs(t, callErr, &se)
			assert.Equal(t, c.msg, se.Msg)
			assert.True(t, se.DurableObjectReset)
			assert.False(t, se.Remote)
			assert.False(t, se.Retryable)
			require.ErrorIs(t, after, object.ErrInstanceReset, "no write after Abort")
			assert.Empty(t, ns.Storage(id).Snapshot(), "the unconfirmed write is lost")
			assert.Equal(t, 1, ns.Resets(id))
			assert.Equal(t, 2, built)
			assert.Equal(t, 0, field, "in-memory fields are lost")
			calls := rt.Calls()
			assert.Equal(t, transport.OutcomeNotRetryable, calls[0].Outcome)
			assert.Len(t, calls[0].Attempts, 1)
			assert.Contains(t, rt.Trace(), "reason=abort")
		})
	}
}
