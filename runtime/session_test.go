package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cursor is an RPC target: Read is marked, Write is not, Sub (marked)
// returns another cursor. It counts what ran.
type cursor struct {
	object.RpcTarget
	ran map[string]int
}

func (c *cursor) Methods() object.Methods {
	return object.Methods{
		"Read":  object.Retryable(func(ctx context.Context) (string, error) { c.ran["Read"]++; return "read", nil }),
		"Write": object.Func(func(ctx context.Context) (string, error) { c.ran["Write"]++; return "wrote", nil }),
		"Sub":   object.Retryable(func(ctx context.Context) (*cursor, error) { return &cursor{ran: c.ran}, nil }),
	}
}

// sessions is an object whose Open (marked) and OpenPlain (unmarked)
// return a cursor.
type sessions struct{ ran map[string]int }

func (s *sessions) Methods() object.Methods {
	open := func(ctx context.Context) (*cursor, error) { return &cursor{ran: s.ran}, nil }
	return object.Methods{
		"Open":      object.Retryable(open),
		"OpenPlain": object.Func(open),
		"Ping":      object.Func(func(ctx context.Context) (string, error) { return "pong", nil }),
	}
}

// sessionMessage is the platform's message (real workerd 1.20261117.1).
const sessionMessage = "After calling a method marked with retryable(), a Durable Object RPC session can only call methods marked with retryable()."

// S12, the RPC-session rule: after a method marked Retryable, the calls
// of its session (through the RPC target it returned, pipelined or
// awaited, and through the targets those returned) must be to marked
// methods; an unmarked one is refused before it runs, with the platform's
// message, and breaks nothing. A session begun by an unmarked method calls
// what it likes. Source: the message and its check are in real workerd
// 1.20261117.1 (`After calling a method marked with retryable(), a Durable
// Object RPC session can only call methods marked with retryable().`; the
// session's first call claims the retry token with its mark,
// RequestObserver::claimRetryTokenBeforeUserCode); the local binary never
// refuses (it claims no token), so this is checked against the source only.
func TestS12_AnRPCSessionBegunByAMarkedMethodCallsOnlyMarkedMethods(t *testing.T) {
	rt := newRuntime(t)
	ran := map[string]int{}
	ns := rt.Namespace("S", func(st *object.State) object.Object { return &sessions{ran: ran} })
	s := mustStub(t, ns, "s")
	got := map[string]error{}
	vals := map[string]any{}
	run(t, rt, func(ctx context.Context) error {
		for name, p := range map[string]*stub.Promise{
			"marked then unmarked, pipelined":   s.Start(ctx, "Open").Pipeline("Write"),
			"marked then marked, pipelined":     s.Start(ctx, "Open").Pipeline("Read"),
			"unmarked then unmarked, pipelined": s.Start(ctx, "OpenPlain").Pipeline("Write"),
		} {
			vals[name], got[name] = p.Await()
		}
		c, err := stub.CallAs[*stub.Stub](ctx, s, "Open")
		if err != nil {
			return err
		}
		vals["marked then unmarked, awaited"], got["marked then unmarked, awaited"] = c.Call(ctx, "Write")
		vals["after the refusal, marked"], got["after the refusal, marked"] = c.Call(ctx, "Read")
		sub, err := stub.CallAs[*stub.Stub](ctx, c, "Sub")
		if err != nil {
			return err
		}
		vals["nested target, unmarked"], got["nested target, unmarked"] = sub.Call(ctx, "Write")
		vals["the object's own stub"], got["the object's own stub"] = s.Call(ctx, "Ping")
		return nil
	})
	for _, refused := range []string{"marked then unmarked, pipelined", "marked then unmarked, awaited", "nested target, unmarked"} {
		err := got[refused]
		require.Error(t, err, refused)
		assert.ErrorIs(t, err, runtime.ErrRetryableSession, refused)
		assert.Contains(t, err.Error(), sessionMessage, refused)
		assert.Contains(t, err.Error(), "Write is not marked object.Retryable; the session began with Open", refused)
		var se *stub.Error
		require.True(t, errors.As(err, &se), refused)
		assert.False(t, se.Retryable, "%s: never retried", refused)
	}
	assert.Equal(t, 1, ran["Write"], "only the unmarked session's Write ran")
	for _, ok := range []string{"marked then marked, pipelined", "unmarked then unmarked, pipelined", "after the refusal, marked", "the object's own stub"} {
		assert.NoError(t, got[ok], ok)
	}
	assert.Equal(t, "wrote", vals["unmarked then unmarked, pipelined"])
	assert.Equal(t, "read", vals["after the refusal, marked"], "the target's stub still works")
	assert.NoError(t, s.Broken(), "the stub is not broken")
}
