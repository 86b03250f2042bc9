package runtime_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outbox sends what it holds in a batch that waits on its upstream (a
// sleep, as an await of a fetch): messages added meanwhile stay.
type outbox struct{ st *object.State }

func (o *outbox) Methods() object.Methods {
	return object.Methods{
		"Add": object.Func(func(ctx context.Context, msg string) (int, error) {
			if err := o.st.Storage().Put(ctx, "msg/"+msg, true); err != nil {
				return 0, err
			}
			list, err := o.st.Storage().List(ctx, object.ListOptions{Prefix: "msg/"})
			return len(list), err
		}),
		"Flush": object.Func(func(ctx context.Context) ([]string, error) {
			list, err := o.st.Storage().List(ctx, object.ListOptions{Prefix: "msg/"})
			if err != nil {
				return nil, err
			}
			if err := o.st.Sleep(ctx, time.Second); err != nil { // the upstream
				return nil, err
			}
			var sent []string
			for _, e := range list {
				sent = append(sent, e.Key)
				if _, err := o.st.Storage().Delete(ctx, e.Key); err != nil {
					return nil, err
				}
			}
			return sent, nil
		}),
	}
}

// O3, C1: a turn records the waits during which it let its object's input
// gate go; a turn that began within one came in during it. Replayed with
// that turn injected at that waiting point, the pair computes what they
// computed in the run; replayed one after the other, in either order,
// they do not.
func TestO3C1_AnInterleavingReplaysAsItRan(t *testing.T) {
	rt := runtime.New(runtime.WithHistory(), runtime.WithEviction(false))
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("OUTBOX", func(st *object.State) object.Object { return &outbox{st: st} })
	var sent []string
	var pending int
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("o")
		if err != nil {
			return err
		}
		if _, err := s.Call(ctx, "Add", "a"); err != nil {
			return err
		}
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error {
			v, err := s.Call(ctx, "Flush")
			sent, _ = v.([]string)
			return err
		})
		g.Go(func(ctx context.Context) error {
			if err := rt.Sleep(ctx, 500*time.Millisecond); err != nil {
				return err
			}
			s2, err := ns.GetByName("o")
			if err != nil {
				return err
			}
			v, err := s2.Call(ctx, "Add", "b")
			pending, _ = v.(int)
			return err
		})
		return g.Wait()
	}))
	require.Equal(t, []string{"msg/a"}, sent)
	require.Equal(t, 2, pending, "b came in while a was still there")
	turns := rt.Turns()
	sort.Slice(turns, func(i, j int) bool { return turns[i].Began < turns[j].Began })
	require.Len(t, turns, 3)
	add, flush, late := &turns[0], &turns[1], &turns[2]
	require.Equal(t, []runtime.Await{{Point: 1, What: "a sleep of 1s", Began: flush.Awaits[0].Began, Ended: flush.Awaits[0].Ended}}, flush.Awaits)
	w := flush.Awaits[0]
	assert.True(t, w.Began < late.Began && late.Ended < w.Ended, "the second Add came in during the Flush's wait")

	ctor := func(st *object.State) object.Object { return &outbox{st: st} }
	base := runtime.Replay(ctor, runtime.ObjectState{}, *add).State
	both := runtime.ReplayAfter(ctor, runtime.Lineage{Base: base}, flush) // no injection: atomic
	assert.Equal(t, []string{"msg/a"}, both.Value)
	after := runtime.Replay(ctor, both.State, *late)
	assert.Equal(t, 1, after.Value, "atomic, Flush then Add: a was gone")

	in := runtime.InterleavingOf([]*runtime.Turn{flush, late})
	assert.Equal(t, []runtime.Segment{{Turn: 0}, {Turn: 1}, {Turn: 0, After: 1}}, in.Order)
	rep, s := runtime.ReplayOn(ctor, runtime.Lineage{Base: base}, flush, in, nil)
	s.Close()
	require.True(t, rep.Exact, rep.Diverged)
	assert.Equal(t, []string{"msg/a"}, rep.Value, "the Flush sent what it listed before its wait")
	require.Len(t, rep.Together, 1)
	assert.Equal(t, 2, rep.Together[0].Value, "the Add, in the wait, saw a still there")
	assert.Equal(t, map[string]any{"msg/b": true}, rep.State.Storage, "b stays")

	wrong := &runtime.Interleaving{Turns: in.Turns, Order: []runtime.Segment{{Turn: 0}, {Turn: 1}, {Turn: 0, After: 2}}}
	rep, s = runtime.ReplayOn(ctor, runtime.Lineage{Base: base}, flush, wrong, nil)
	s.Close()
	assert.False(t, rep.Exact, "a waiting point the turn never reaches")
	assert.Contains(t, rep.Diverged, "before the one at which it let the gate go, 2")
}

// likes reads its count, awaits a call out, and writes the count it read
// plus one: the platform's check-then-act race across an await.
type likes struct{ st *object.State }

func (l *likes) Methods() object.Methods {
	return object.Methods{"Like": object.Func(func(ctx context.Context) (int, error) {
		var n int
		if _, err := l.st.Storage().Get(ctx, "n", &n); err != nil {
			return 0, err
		}
		if err := l.st.Sleep(ctx, time.Second); err != nil { // the call out
			return 0, err
		}
		return n + 1, l.st.Storage().Put(ctx, "n", n+1)
	})}
}

// O3, C1: two turns that interleave both ways (each read, then waited
// while the other read) replay as they ran: both answer 1, and the count
// is 1.
func TestO3C1_ACheckThenActRaceReplaysAsItRan(t *testing.T) {
	rt := runtime.New(runtime.WithHistory(), runtime.WithEviction(false))
	t.Cleanup(func() { _ = rt.Close() })
	ctor := func(st *object.State) object.Object { return &likes{st: st} }
	ns := rt.Namespace("LIKES", ctor)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		for i := range 2 {
			g.Go(func(ctx context.Context) error {
				if err := rt.Sleep(ctx, time.Duration(i)*time.Millisecond); err != nil {
					return err
				}
				s, err := ns.GetByName("p")
				if err != nil {
					return err
				}
				_, err = s.Call(ctx, "Like")
				return err
			})
		}
		return g.Wait()
	}))
	turns := rt.Turns()
	require.Len(t, turns, 2)
	a, b := &turns[0], &turns[1]
	in := runtime.InterleavingOf([]*runtime.Turn{a, b})
	assert.Equal(t, []runtime.Segment{{Turn: 0}, {Turn: 1}, {Turn: 0, After: 1}, {Turn: 1, After: 1}}, in.Order)
	rep := runtime.ReplayAfter(ctor, runtime.Lineage{Turns: nil}, a)
	assert.Equal(t, 1, rep.Value)
	rep, s := runtime.ReplayOn(ctor, runtime.Lineage{}, a, in, nil)
	s.Close()
	require.True(t, rep.Exact, rep.Diverged)
	assert.Equal(t, 1, rep.Value)
	require.Len(t, rep.Together, 1)
	assert.Equal(t, 1, rep.Together[0].Value, "the second read before the first wrote")
	assert.Equal(t, map[string]any{"n": 1}, rep.State.Storage, "an update lost, as in the run")
}
