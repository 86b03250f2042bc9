package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// booth books seats and stores when each hold runs out, reading the clock
// (st.Now), the seeded source (Retry's jitter) and, in Confirm, another
// object (a call out). Its alarm and its queue do work of their own.
type booth struct {
	agent.Agent
	st   *object.State
	bank *runtime.Namespace
}

func (b *booth) Methods() object.Methods {
	return object.Methods{
		"Hold": object.Func(func(ctx context.Context, seat string) (string, error) {
			s := b.st.Storage()
			if ok, err := s.Get(ctx, "hold/"+seat, new(string)); err != nil || ok {
				return "taken", err
			}
			until := b.st.Now().Add(15 * time.Minute)
			if err := s.Put(ctx, "hold/"+seat, until.Format(time.RFC3339)); err != nil {
				return "", err
			}
			if err := b.st.SetAlarm(ctx, until); err != nil {
				return "", err
			}
			return until.Format(time.RFC3339), nil
		}),
		"Flaky": object.Func(func(ctx context.Context) (int, error) {
			n := 0
			err := agent.Retry(ctx, func(ctx context.Context, attempt int) error {
				n = attempt
				if attempt < 3 {
					return errors.New("not yet")
				}
				return nil
			}, agent.RetryOptions{MaxAttempts: new(3)})
			return n, err
		}),
		"Confirm": object.Func(func(ctx context.Context, seat string) (int, error) {
			s, err := b.bank.GetByName("bank")
			if err != nil {
				return 0, err
			}
			n, err := stub.CallAs[int](ctx, s, "Add", 10)
			if err != nil {
				return 0, err
			}
			return n, b.st.Storage().Put(ctx, "paid/"+seat, n)
		}),
		"Later": object.Func(func(ctx context.Context, seat string) error {
			_, err := b.Queue(ctx, "Release", seat)
			return err
		}),
		"Release": object.Func(func(ctx context.Context, seat string) error {
			_, err := b.st.Storage().Delete(ctx, "hold/"+seat)
			return err
		}),
	}
}

func (b *booth) Alarm(ctx context.Context, info object.AlarmInfo) error {
	return b.st.Storage().Put(ctx, "alarm-fired", b.st.Now().Format(time.RFC3339))
}

// bankAdder adds to a total.
type bankAdder struct{ st *object.State }

func (a *bankAdder) Methods() object.Methods {
	return object.Methods{"Add": object.Func(func(ctx context.Context, n int) (int, error) {
		var v int
		if _, err := a.st.Storage().Get(ctx, "n", &v); err != nil {
			return 0, err
		}
		v += n
		return v, a.st.Storage().Put(ctx, "n", v)
	})}
}

// boothWorld is a runtime with a booth and a bank, keeping its history.
func boothWorld(t *testing.T, opts ...runtime.Option) (*runtime.Runtime, *runtime.Namespace, runtime.Constructor) {
	t.Helper()
	rt := runtime.New(append([]runtime.Option{runtime.WithSeed(3), runtime.WithHistory()}, opts...)...)
	t.Cleanup(func() { _ = rt.Close() })
	bank := rt.Namespace("BANK", func(st *object.State) object.Object { return &bankAdder{st: st} })
	ctor := func(st *object.State) object.Object { return &booth{st: st, bank: bank} }
	return rt, rt.Namespace("BOOTH", ctor), ctor
}

func call(ctx context.Context, ns *runtime.Namespace, method string, args ...any) (any, error) {
	s, err := ns.GetByName("show")
	if err != nil {
		return nil, err
	}
	return s.Call(ctx, method, args...)
}

// turnsOf returns the turns of BOOTH/show.
func turnsOf(rt *runtime.Runtime) []runtime.Turn {
	var out []runtime.Turn
	for _, tu := range rt.Turns() {
		if tu.Namespace == "BOOTH" {
			out = append(out, tu)
		}
	}
	return out
}

// objectHistory is BOOTH/show's part of rt's history.
func objectHistory(t *testing.T, rt *runtime.Runtime) runtime.ObjectHistory {
	t.Helper()
	for _, oh := range rt.History().Objects {
		if oh.Namespace == "BOOTH" && oh.Object == "show" {
			return oh
		}
	}
	t.Fatal("BOOTH/show ran no turn")
	return runtime.ObjectHistory{}
}

// C1: a turn's history holds the instant it began and what it read of the
// clock, in order; replayed alone from the state it began in, it computes
// what it computed, exactly.
func TestC1_ReplayOfATurnThatReadsTheClock(t *testing.T) {
	rt, ns, ctor := boothWorld(t)
	var got any
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		if err := rt.Sleep(ctx, 42*time.Second); err != nil {
			return err
		}
		var err error
		got, err = call(ctx, ns, "Hold", "a1")
		return err
	}))
	turns := turnsOf(rt)
	require.Len(t, turns, 1)
	tu := turns[0]
	assert.Equal(t, runtime.TurnRequest, tu.Kind)
	assert.Equal(t, "Hold", tu.Method)
	assert.Equal(t, []any{"a1"}, tu.Args)
	assert.Equal(t, 42*time.Second, tu.Start)
	assert.Equal(t, runtime.Epoch.Add(42*time.Second), tu.At)
	require.Len(t, tu.Reads, 1)
	assert.Equal(t, runtime.ReadClock, tu.Reads[0].Kind)
	assert.Equal(t, runtime.Epoch.Add(42*time.Second), tu.Reads[0].Time)

	init := objectHistory(t, rt).Initial
	assert.Empty(t, init.Storage, "the booth was empty when its first turn began")
	rep := runtime.Replay(ctor, init, tu)
	assert.True(t, rep.Exact, rep.Diverged)
	assert.NoError(t, rep.Err)
	assert.Equal(t, got, rep.Value)
	end := ns.ObjectStateOf(ns.IDFromName("show"))
	assert.Equal(t, end, rep.State, "the same storage and the same alarm")
}

// C1: replayed from a state in which it takes another path, a turn reads
// the clock as it would have there (at its instant), exactly; a call out
// the turn did not make cannot be answered, and the replay says so rather
// than guess silently.
func TestC1_ReplayFromAnotherStateAndWhereItDiverges(t *testing.T) {
	rt, ns, ctor := boothWorld(t)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		if _, err := call(ctx, ns, "Hold", "a1"); err != nil {
			return err
		}
		_, err := call(ctx, ns, "Confirm", "a1")
		return err
	}))
	turns := turnsOf(rt)
	taken := runtime.ObjectState{Storage: map[string]any{"hold/a1": "2025-01-01T00:15:00Z"}}
	rep := runtime.Replay(ctor, taken, turns[0])
	assert.Equal(t, "taken", rep.Value)
	assert.True(t, rep.Exact, "another path, no read it cannot know: %s", rep.Diverged)

	other := turns[1]
	other.Reads = append([]runtime.Read(nil), other.Reads...)
	out := *other.Reads[0].Call
	out.Method = "Sub" // as if the turn had called another method
	other.Reads[0].Call = &out
	rep = runtime.Replay(ctor, runtime.ObjectState{}, other)
	assert.False(t, rep.Exact)
	assert.Contains(t, rep.Diverged, "it called BANK/bank.Add(10) where the turn called BANK/bank.Sub(10)")
	assert.True(t, rep.Refuted, "a call out the turn did not make: no run went so")
	assert.ErrorContains(t, rep.Err, runtime.ErrReplayDiverged.Error(), "the method got the error, and returned it")
}

// C1: the seeded draws a turn makes (Retry's jitter) are in its history
// and fed back to its replay: the replay sleeps the same backoffs.
func TestC1_ReplayFeedsTheTurnsSeededDraws(t *testing.T) {
	rt, ns, ctor := boothWorld(t)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := call(ctx, ns, "Flaky")
		return err
	}))
	tu := turnsOf(rt)[0]
	draws := 0
	for _, rd := range tu.Reads {
		if rd.Kind == runtime.ReadRandom {
			draws++
		}
	}
	assert.Positive(t, draws, "two backoffs drew from the seeded source: %+v", tu.Reads)
	rep := runtime.Replay(ctor, runtime.ObjectState{}, tu)
	assert.True(t, rep.Exact, rep.Diverged)
	assert.Equal(t, 3, rep.Value)
	var real, replayed []string
	for _, e := range rt.Events() {
		real = append(real, e.Text())
	}
	for _, e := range rep.Events {
		replayed = append(replayed, e.Text())
	}
	assert.Equal(t, real, replayed, "the same retries with the same delays")
}

// C2: a call out is a read of the calling turn: its replay is answered
// from the history, without another object, and lists the call.
func TestC2_ReplayAnswersCallsOutFromTheHistory(t *testing.T) {
	rt, ns, ctor := boothWorld(t)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := call(ctx, ns, "Confirm", "a1")
		return err
	}))
	tu := turnsOf(rt)[0]
	require.Len(t, tu.Reads, 1)
	require.Equal(t, runtime.ReadCall, tu.Reads[0].Kind)
	assert.Equal(t, "BANK", tu.Reads[0].Call.Namespace)
	assert.Equal(t, 10, tu.Reads[0].Call.Result)
	rep := runtime.Replay(ctor, runtime.ObjectState{}, tu)
	assert.True(t, rep.Exact, rep.Diverged)
	assert.Equal(t, 10, rep.Value)
	require.Len(t, rep.Calls, 1)
	assert.Equal(t, "Add", rep.Calls[0].Method)
	assert.Equal(t, map[string]any{"paid/a1": 10}, rep.State.Storage)
}

// C2: alarm deliveries and queue runs are turns of the object's history,
// each with the events it recorded, and replay as they ran.
func TestC2_LaneTurnsAreInTheHistoryAndReplay(t *testing.T) {
	rt, ns, ctor := boothWorld(t)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		if _, err := call(ctx, ns, "Hold", "a1"); err != nil {
			return err
		}
		_, err := call(ctx, ns, "Later", "a1")
		return err
	}))
	require.NoError(t, rt.Advance(time.Hour))
	var kinds []string
	for _, tu := range turnsOf(rt) {
		kinds = append(kinds, fmt.Sprint(tu.Kind, " ", len(tu.Events)))
	}
	assert.Equal(t, []string{"request 0", "request 0", "queue 2", "alarm 1"}, kinds)
	turns := turnsOf(rt)
	// Replay the alarm from the state before it: after the queue ran.
	before := runtime.ObjectState{Storage: map[string]any{"__dosim/seq": uint64(1)}, Alarm: *turns[3].Alarm}
	require.True(t, before.Alarm.Set)
	rep := runtime.Replay(ctor, before, turns[3])
	assert.True(t, rep.Exact, rep.Diverged)
	require.Len(t, rep.Events, 1)
	assert.Equal(t, turns[3].Events[0].Text(), rep.Events[0].Text())
	assert.Equal(t, "2025-01-01T00:15:00Z", rep.State.Storage["alarm-fired"])
	assert.False(t, rep.State.Alarm.Set, "delivered: the alarm is gone")
}

// C1: a turn cut short by a reset says so in its history; one whose reply
// was lost after it ran to its end (fail-after-delivery resets the object
// after the method) is not cut.
func TestC1_ATurnCutByAResetSaysSo(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Hold", Fault: transport.FailAfterDelivery})
	rt, ns, _ := boothWorld(t, runtime.WithFaults(plan))
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, _ = call(ctx, ns, "Hold", "a1")
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error {
			_, _ = call(ctx, ns, "Flaky") // sleeps in Retry's backoff
			return nil
		})
		g.Go(func(ctx context.Context) error {
			if err := rt.Sleep(ctx, time.Millisecond); err != nil {
				return err
			}
			return ns.Reset(ns.IDFromName("show"), transport.ResetCodeUpdate)
		})
		return g.Wait()
	}))
	turns := turnsOf(rt)
	require.Len(t, turns, 2)
	assert.Equal(t, "", turns[0].Cut, "Hold ran to its end; the reset came after it")
	assert.Equal(t, "reset", turns[1].Cut)
}

// D1: keeping the history changes nothing the run does: the same seed
// gives the same trace with and without it.
func TestD1_HistoryChangesNoTrace(t *testing.T) {
	trace := func(opts ...runtime.Option) string {
		rt := runtime.New(append([]runtime.Option{runtime.WithSeed(9),
			runtime.WithFaults(transport.Random(transport.Rates{transport.LoseResponse: 0.3}))}, opts...)...)
		defer rt.Close()
		bank := rt.Namespace("BANK", func(st *object.State) object.Object { return &bankAdder{st: st} })
		ns := rt.Namespace("BOOTH", func(st *object.State) object.Object { return &booth{st: st, bank: bank} })
		require.NoError(t, rt.Run(func(ctx context.Context) error {
			for _, m := range []string{"Hold", "Flaky", "Confirm", "Later"} {
				args := []any{"a1"}
				if m == "Flaky" {
					args = nil
				}
				_, _ = call(ctx, ns, m, args...)
			}
			return nil
		}))
		require.NoError(t, rt.Advance(time.Hour))
		return rt.Trace()
	}
	assert.Equal(t, trace(), trace(runtime.WithHistory()))
}

// C2: a write a test makes to an object's storage between its turns is
// counted: a replay of the turns alone cannot account for it. Writes
// before the first turn are its initial state.
func TestC2_WritesOutsideTheTurnsAreCounted(t *testing.T) {
	rt, ns, _ := boothWorld(t)
	id := ns.IDFromName("show")
	require.NoError(t, ns.Storage(id).Put(context.Background(), "seeded", 1))
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		_, err := call(ctx, ns, "Hold", "a1")
		return err
	}))
	oh := objectHistory(t, rt)
	assert.Equal(t, map[string]any{"seeded": 1}, oh.Initial.Storage)
	assert.Zero(t, oh.Outside)
	require.NoError(t, ns.Storage(id).Put(context.Background(), "between", 2))
	oh = objectHistory(t, rt)
	assert.Equal(t, 1, oh.Outside)
	assert.Equal(t, map[string]any{"seeded": 1, "between": 2, "hold/a1": "2025-01-01T00:15:00Z"}, oh.Final.Storage)
}
