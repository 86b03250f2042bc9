package runtime_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// tally counts in SQL, and keeps nothing in its fields; rememberer is one
// that keeps what Remember saw.
type tally struct{ st *object.State }

type rememberer struct {
	tally
	seen []string
}

func (k *rememberer) Methods() object.Methods {
	return object.Methods{"Remember": object.Func(func(ctx context.Context, s string) (int, error) {
		k.seen = append(k.seen, s)
		return k.add(ctx, len(k.seen))
	})}
}

func (ta *tally) add(ctx context.Context, n int) (int, error) {
	db := ta.st.SQL()
	if _, err := db.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (n INTEGER)"); err != nil {
		return 0, err
	}
	if _, err := db.Exec(ctx, "INSERT INTO t VALUES (?)", n); err != nil {
		return 0, err
	}
	var sum int
	c, err := db.Exec(ctx, "SELECT sum(n) FROM t")
	if err != nil {
		return 0, err
	}
	return sum, c.One(&sum)
}

func (ta *tally) Methods() object.Methods {
	return object.Methods{
		"Add":  object.Func(ta.add),
		"Fail": object.Func(func(context.Context) error { return errors.New("no") }),
		"Put":  object.Func(func(ctx context.Context, k string) error { return ta.st.Storage().Put(ctx, k, 1) }),
	}
}

// C1: the runtime keeps the outcome of a turn of an object that keeps an
// SQL database (what it answered, the state it began in and left), the
// next turn beginning in the very state the last one left; it keeps none
// for a turn that failed, one whose instance keeps something in its
// fields, or a request to a key-value object, whose replay costs less.
func TestC1_ARunKeepsItsTurnsOutcomesWhereAReplayCostsMore(t *testing.T) {
	rt := runtime.New(runtime.WithSeed(1), runtime.WithHistory())
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("TALLY", func(st *object.State) object.Object { return &tally{st: st} })
	keep := rt.Namespace("KEEP", func(st *object.State) object.Object { return &rememberer{tally: tally{st: st}} })
	callAs := func(ctx context.Context, name, method string, args ...any) {
		in := ns
		if method == "Remember" {
			in = keep
		}
		s, err := in.GetByName(name)
		require.NoError(t, err)
		_, _ = s.Call(ctx, method, args...)
	}
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		callAs(ctx, "sql", "Add", 2)
		callAs(ctx, "sql", "Add", 3)
		callAs(ctx, "sql", "Fail")
		callAs(ctx, "keeper", "Remember", "x")
		callAs(ctx, "kv", "Put", "a")
		callAs(ctx, "kv", "Put", "b")
		return nil
	}))
	turns := rt.History().Turns
	require.Len(t, turns, 6)
	outcome := func(i int) (*runtime.ObjectState, *runtime.Replayed) {
		return runtime.Outcome(seal.Key{}, turns[i])
	}

	b1, a1 := outcome(0)
	require.NotNil(t, b1, "the first Add: it began empty and made the database")
	assert.Empty(t, b1.Storage)
	assert.Equal(t, 2, a1.Value)
	assert.True(t, a1.Exact)
	b2, a2 := outcome(1)
	require.NotNil(t, b2)
	assert.Equal(t, reflect.ValueOf(a1.State.Storage).UnsafePointer(), reflect.ValueOf(b2.Storage).UnsafePointer(),
		"the second Add began in the state the first left: the same value")
	assert.Equal(t, 5, a2.Value)
	replayed := runtime.Replay(ns.Constructor(), *b2, *turns[1])
	assert.Equal(t, replayed.Value, a2.Value, "what its replay from there answers")
	assert.Equal(t, replayed.State, a2.State, "and leaves")

	b, _ := outcome(2)
	assert.Nil(t, b, "Fail answered an error")
	b, _ = outcome(3)
	assert.Nil(t, b, "the keeper's instance keeps what it saw")
	b, _ = outcome(4)
	assert.Nil(t, b, "a key-value object's first turn made no database")
	b, _ = outcome(5)
	assert.Nil(t, b, "nor its next")
}

// C1: an object that runs tasks (an agent) keeps its requests' outcomes,
// key-value though it is, and its queue's run keeps one too.
func TestC1_AnAgentKeepsItsRequestsAndItsQueuesOutcomes(t *testing.T) {
	rt, ns, _ := boothWorld(t)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		if _, err := call(ctx, ns, "Hold", "a1"); err != nil {
			return err
		}
		_, err := call(ctx, ns, "Later", "a1")
		return err
	}))
	turns := turnsOf(rt)
	require.Len(t, turns, 3)
	kinds := []runtime.TurnKind{runtime.TurnRequest, runtime.TurnRequest, runtime.TurnQueue}
	for i, tu := range turns {
		assert.Equal(t, kinds[i], tu.Kind)
		before, after := runtime.Outcome(seal.Key{}, &tu)
		require.NotNil(t, before, "turn %d (%s)", i, tu.Kind)
		assert.True(t, after.Exact)
	}
	_, last := runtime.Outcome(seal.Key{}, &turns[2])
	assert.NotContains(t, last.State.Storage, "hold/a1", "the queued Release ran")
}

// outcomesAreReplays checks every outcome among turns against the replay
// of its turn from the state it began in (rule C1), and returns how many
// turns kept one.
func outcomesAreReplays(t *testing.T, ctor runtime.Constructor, turns []runtime.Turn) int {
	t.Helper()
	kept := 0
	for i := range turns {
		tu := &turns[i]
		before, after := runtime.Outcome(seal.Key{}, tu)
		if before == nil {
			continue
		}
		kept++
		rep := runtime.Replay(ctor, *before, *tu)
		assert.Equal(t, rep.Value, after.Value, "turn %d (%s %s): the answer", i, tu.Kind, tu.Method)
		assert.Equal(t, rep.State, after.State, "turn %d (%s %s): the state it left", i, tu.Kind, tu.Method)
	}
	return kept
}

// quirks is an SQL class whose turns read what an object's state does not
// hold, unless the runtime keeps no outcome for them: the alarm's first
// due instant while a failed delivery waits for its retry, and what a
// SetAlarm then asked for; the connection's own counts. Its alarm always
// fails; its constructor may set the alarm.
type quirks struct{ tally }

func (q *quirks) Alarm(context.Context, object.AlarmInfo) error { return errors.New("fails") }

func (q *quirks) Methods() object.Methods {
	m := q.tally.Methods()
	m["Arm"] = object.Func(func(ctx context.Context) error {
		if _, err := q.add(ctx, 0); err != nil {
			return err
		}
		return q.st.Storage().SetAlarm(ctx, q.st.Now().Add(time.Second))
	})
	m["SetTo"] = object.Func(func(ctx context.Context, ms int64) error { return q.st.Storage().SetAlarm(ctx, time.UnixMilli(ms)) })
	m["Del"] = object.Func(func(ctx context.Context) error { return q.st.Storage().DeleteAlarm(ctx) })
	m["When"] = object.Func(func(ctx context.Context) (int64, error) {
		at, ok, err := q.st.Storage().GetAlarm(ctx)
		if !ok {
			return -1, err
		}
		return at.UnixMilli(), err
	})
	m["Wipe"] = object.Func(func(ctx context.Context) error { return q.st.Storage().DeleteAll(ctx) })
	m["Tables"] = object.Func(func(ctx context.Context) (int, error) {
		var n int
		c, err := q.st.SQL().Exec(ctx, "SELECT count(*) FROM sqlite_schema")
		if err != nil {
			return 0, err
		}
		return n, c.One(&n)
	})
	for _, query := range []string{"SELECT last_insert_rowid()", "SELECT changes()", "SELECT total_changes()"} {
		m[query] = object.Func(func(ctx context.Context) (int, error) {
			var n int
			c, err := q.st.SQL().Exec(ctx, query)
			if err != nil {
				return 0, err
			}
			return n, c.One(&n)
		})
	}
	return m
}

// C1, O6, L8, Q1: a turn that reads what the object's state does not hold
// keeps no outcome, and every outcome kept is what its turn's replay from
// its state computes: a GetAlarm or a SetAlarm while a failed delivery
// waits for its retry, a DeleteAll (which drops the tables and is a
// change of the state, though no write of a key), a constructor that
// sets the alarm, the connection's counts. (Found by a review: each
// answered otherwise than its replay.)
func TestC1_ATurnThatReadsWhatTheStateDoesNotHoldKeepsNoOutcome(t *testing.T) {
	cases := map[string]struct {
		ctorAlarm bool // the constructor sets the alarm: no turn keeps an outcome
		ctorPut   bool // the constructor counts its builds in storage: likewise
		calls     [][]any
	}{
		"alarm retry waits": {calls: [][]any{{"Arm"}, {"advance"}, {"When"}, {"SetTo", int64(4102444800000)}, {"When"}}},
		"DeleteAll":         {calls: [][]any{{"Add", 2}, {"Wipe"}, {"Tables"}, {"Add", 3}, {"Tables"}}},
		"constructor alarm": {ctorAlarm: true, calls: [][]any{{"Arm"}, {"Del"}, {"When"}}},
		"constructor write": {ctorPut: true, calls: [][]any{{"Add", 1}, {"Add", 2}}},
		"connection counts": {calls: [][]any{{"Add", 1}, {"Add", 2}, {"SELECT last_insert_rowid()"}, {"SELECT changes()"}, {"SELECT total_changes()"}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rt := runtime.New(runtime.WithSeed(1), runtime.WithHistory())
			t.Cleanup(func() { _ = rt.Close() })
			ctor := func(st *object.State) object.Object {
				if c.ctorAlarm {
					_ = st.Storage().SetAlarm(context.Background(), st.Now().Add(time.Hour))
				}
				if c.ctorPut {
					var n int
					_, _ = st.Storage().Get(context.Background(), "builds", &n)
					_ = st.Storage().Put(context.Background(), "builds", n+1)
				}
				return &quirks{tally: tally{st: st}}
			}
			ns := rt.Namespace("Q", ctor)
			s, err := ns.GetByName("q")
			require.NoError(t, err)
			for _, call := range c.calls {
				if call[0] == "advance" {
					require.NoError(t, rt.Advance(1500*time.Millisecond)) // the first delivery fails: its retry waits
					continue
				}
				require.NoError(t, rt.Run(func(ctx context.Context) error {
					_, err := s.Call(ctx, call[0].(string), call[1:]...)
					return err
				}))
			}
			kept := outcomesAreReplays(t, ns.Constructor(), rt.Turns())
			if c.ctorAlarm || c.ctorPut {
				assert.Zero(t, kept, "a replay's build does it again")
			} else {
				assert.Positive(t, kept, "the other turns keep theirs")
			}
		})
	}
}
