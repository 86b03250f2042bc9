package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokens keeps its count in a field, as the platform's rate limiter does,
// and the instant its constructor ran.
type tokens struct {
	st   *object.State
	left int
	made time.Time
}

func newTokens(st *object.State) object.Object {
	return &tokens{st: st, left: 2, made: st.Now()}
}

func (tk *tokens) Methods() object.Methods {
	return object.Methods{
		"Take": object.Func(func(ctx context.Context) (int, error) {
			if tk.left > 0 {
				tk.left--
			}
			return tk.left, nil
		}),
		"Peek": object.Func(func(ctx context.Context) (int, error) { return tk.left, nil }),
		"Made": object.Func(func(ctx context.Context) (time.Time, error) {
			return tk.made, nil
		}),
		"Now": object.Func(func(ctx context.Context) (time.Time, error) { return tk.st.Now(), nil }),
	}
}

// runTokens calls methods on one tokens object, a second apart, in a
// runtime that keeps a history, and resets it before the call at reset
// (-1: never).
func runTokens(t *testing.T, reset int, methods ...string) (*runtime.Runtime, []runtime.Turn) {
	t.Helper()
	rt := runtime.New(runtime.WithHistory(), runtime.WithSeed(5))
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("TOKENS", newTokens)
	id := ns.IDFromName("t")
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		for i, m := range methods {
			if i == reset {
				require.NoError(t, ns.Reset(id, transport.ResetCodeUpdate))
			}
			s, err := ns.Get(id)
			if err != nil {
				return err
			}
			if _, err := s.Call(ctx, m); err != nil {
				return err
			}
			if err := rt.Sleep(ctx, time.Second); err != nil {
				return err
			}
		}
		return nil
	}))
	return rt, rt.Turns()
}

// C2: each turn names the instance it ran on; a reset makes the next
// turn's a new one, and a turn carries what its instance's constructor
// read.
func TestC2_TurnsNameTheirInstance(t *testing.T) {
	_, turns := runTokens(t, 2, "Take", "Take", "Take")
	require.Len(t, turns, 3)
	assert.Equal(t, []int{1, 1, 2}, []int{turns[0].Instance, turns[1].Instance, turns[2].Instance})
	require.Len(t, turns[0].Ctor, 1, "the constructor read the clock")
	assert.Equal(t, runtime.ReadClock, turns[0].Ctor[0].Kind)
	assert.Equal(t, turns[0].Ctor, turns[1].Ctor, "the turns of one instance share its constructor's reads")
	assert.NotEqual(t, turns[0].Ctor[0].Time, turns[2].Ctor[0].Time, "the second instance was built later")
	assert.Empty(t, turns[0].Reads, "the constructor's reads are not the turn's")
}

// C2: a turn replayed after the turns its instance ran before it sees the
// fields they left; replayed alone it sees a fresh instance. What the
// instance keeps that a fresh one would not is Replayed.Memory.
func TestC2_ReplayAfterRebuildsTheInstance(t *testing.T) {
	_, turns := runTokens(t, -1, "Take", "Take")
	first, second := &turns[0], &turns[1]
	alone := runtime.Replay(newTokens, runtime.ObjectState{}, *second)
	assert.Equal(t, 1, alone.Value, "a fresh instance has two tokens left")
	after := runtime.ReplayAfter(newTokens, runtime.Lineage{Turns: []*runtime.Turn{first}}, second)
	require.True(t, after.Exact, after.Diverged)
	assert.Equal(t, 0, after.Value, "after the first Take, one token was left")
	assert.Contains(t, after.Memory, "left:0")
	assert.False(t, after.Open, "it read nothing past its reads")
}

// C2: Memory is empty when a fresh instance over the state would keep the
// same: a class whose fields a constructor sets and no turn changes.
func TestC2_ReplayedMemoryIsEmptyWhenAFreshInstanceIsTheSame(t *testing.T) {
	_, turns := runTokens(t, -1, "Peek", "Take")
	rep := runtime.Replay(newTokens, runtime.ObjectState{}, turns[0])
	require.True(t, rep.Exact, rep.Diverged)
	assert.Empty(t, rep.Memory, "Peek changes no field: a fresh instance, fed the same reads, is the same")
	rep = runtime.Replay(newTokens, runtime.ObjectState{}, turns[1])
	assert.NotEmpty(t, rep.Memory, "Take spends a token")
}

// C1: a replay builds its instance with what the constructor read as it
// ran: a later turn of the instance, replayed alone at its own instant,
// answers the instant the constructor read then.
func TestC1_ReplayFeedsTheConstructorsReads(t *testing.T) {
	rt, turns := runTokens(t, -1, "Peek", "Made")
	made := rt.Calls()[1].Result
	rep := runtime.Replay(newTokens, runtime.ObjectState{}, turns[1])
	require.True(t, rep.Exact, rep.Diverged)
	assert.Equal(t, made, rep.Value)
	assert.NotEqual(t, turns[1].At, rep.Value, "not the turn's own instant: the constructor ran a second before")
	assert.False(t, rep.Open)
}

// C1: a replay that reads the clock past what its turn read reads the
// turn's instant moved on by its own sleeps, and says it is Open: what it
// computed depends on the turn's instant, not only on its reads.
func TestC1_AReplayThatReadsPastItsTurnIsOpen(t *testing.T) {
	_, turns := runTokens(t, -1, "Take", "Now")
	now := turns[1]
	require.Len(t, now.Reads, 1)
	exact := runtime.Replay(newTokens, runtime.ObjectState{}, now)
	assert.False(t, exact.Open)
	now.Reads = nil // as if the turn had read nothing: the replay reads past it
	open := runtime.Replay(newTokens, runtime.ObjectState{}, now)
	assert.True(t, open.Open)
	assert.Equal(t, now.At, open.Value, "the turn's own instant")
}
