package explore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
)

// ranChecker compares each step the model takes from a run's own outcome
// with the replay of its turn from the same state (rule C1: the replay
// computes what the turn computed there), and keeps what differs.
type ranChecker struct {
	mu     sync.Mutex
	differ []string
}

func (rc *ranChecker) check(m *model, ctor runtime.Constructor, s *state, a *alt, got stepResult) {
	rep := runtime.ReplayAfter(ctor, runtime.Lineage{Base: s.st}, a.turn)
	var inst *instance
	if rep.Memory != "" {
		inst = &instance{n: a.turn.Instance, memory: rep.Memory}
	}
	effects := append([]string(nil), s.effects...)
	for _, e := range rep.Effects {
		effects = append(effects, effectText(e.Kind, e.Payload))
	}
	for i := range rep.Calls {
		effects = append(effects, callEffect(&rep.Calls[i]))
	}
	want := stepResult{out: replayedKey(a.turn, rep), exact: rep.Exact, why: rep.Diverged, refuted: rep.Refuted, open: rep.Open}
	wantTo := m.intern(rep.State, effects, inst)
	diff := ""
	switch {
	case got.out != want.out:
		diff = fmt.Sprintf("out %q, replayed %q", got.out, want.out)
	case got.exact != want.exact || got.why != want.why || got.refuted != want.refuted || got.open != want.open:
		diff = fmt.Sprintf("exact/why/refuted/open %v %q %v %v, replayed %v %q %v %v",
			got.exact, got.why, got.refuted, got.open, want.exact, want.why, want.refuted, want.open)
	case got.to.key != wantTo.key:
		diff = fmt.Sprintf("state\n  %s\nreplayed\n  %s", got.to.key, wantTo.key)
	}
	if diff != "" {
		rc.mu.Lock()
		rc.differ = append(rc.differ, fmt.Sprintf("%s/%s %s turn at %v: %s", m.namespace, m.object, a.turn.Kind, a.turn.Start, diff))
		rc.mu.Unlock()
	}
}

// sweepChecked runs sweep with every step its models take from a run's
// own outcome compared with its replay, and returns how many it took.
func sweepChecked(t *testing.T, ms *models, sweep func() error) int64 {
	t.Helper()
	rc := &ranChecker{}
	ms.checkRan = rc.check
	require.NoError(t, sweep())
	require.Empty(t, rc.differ)
	return ms.taken.Load()
}

// C1: a step the model takes from the run's own outcome of a turn (the
// turn's state as it began, what it left and answered) is the step a
// replay of the turn from that state computes, in every scenario of
// testdata and every class of the zoo, buggy and fixed; and the sweeps
// take such steps (booth's most of all).
func TestC1_ARunsOwnOutcomeIsWhatItsReplayComputes(t *testing.T) {
	files, err := filepath.Glob("../testdata/scenarios/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	builtIns := scenario.WithBuiltInClasses(examples.Constructors())
	taken := map[string]int64{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.Load(f, builtIns)
			require.NoError(t, err)
			e, err := New(sc, Options{Seeds: 20, Workers: 2})
			require.NoError(t, err)
			taken[name] = sweepChecked(t, e.models, func() error { _, err := e.SweepContext(context.Background()); return err })
		})
	}
	for _, b := range zoo.Bugs() {
		seeds := 10
		if b.Background {
			seeds = 2
		}
		for form, fn := range map[string]zoo.Driver{"buggy": b.Buggy, "fixed": b.Fixed} {
			t.Run(b.Name+"/"+form, func(t *testing.T) {
				o := Options{Seeds: seeds, Workers: 2, Rates: b.Rates, Interleaving: b.Interleaving, NoShrink: true}
				if b.Background {
					o.MinChecked = -1
				}
				fe, err := NewFunc(o, fn)
				require.NoError(t, err)
				taken[b.Name+"/"+form] = sweepChecked(t, fe.models, func() error { _, err := fe.SweepContext(context.Background()); return err })
			})
		}
	}
	require.Positive(t, taken["booth"], "booth's sweep takes its turns' own outcomes")
	require.Positive(t, taken["outbox-queue"], "outbox-queue's sweep takes its turns' own outcomes")
}

// wiper keeps a table, and DeleteAll drops it.
type wiper struct{ st *object.State }

func (w *wiper) Methods() object.Methods {
	return object.Methods{
		"Add": object.Func(func(ctx context.Context, n int) error {
			db := w.st.SQL()
			if _, err := db.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (n INTEGER)"); err != nil {
				return err
			}
			_, err := db.Exec(ctx, "INSERT INTO t VALUES (?)", n)
			return err
		}),
		"Wipe": object.Func(func(ctx context.Context) error { return w.st.Storage().DeleteAll(ctx) }),
		"Tables": object.Func(func(ctx context.Context) (int, error) {
			var n int
			c, err := w.st.SQL().Exec(ctx, "SELECT count(*) FROM sqlite_schema")
			if err != nil {
				return 0, err
			}
			return n, c.One(&n)
		}),
	}
}

// C1, L8: a DeleteAll changes the state though it writes no key: the turn
// after it begins in the state it left, not in the one before it, and
// the history of an object that adds, wipes and counts its tables is
// clean. (Found by a review: the turns after a DeleteAll began in the
// state before it, and every seed reported a violation.)
func TestC1_ATurnAfterADeleteAllBeginsInTheStateItLeft(t *testing.T) {
	fe, err := NewFunc(Options{Seeds: 3, Workers: 1, NoShrink: true, Rates: transport.Rates{transport.Faults()[0]: 1e-9}},
		func(ctx context.Context, rt *runtime.Runtime) error {
			s, err := rt.Namespace("W", func(st *object.State) object.Object { return &wiper{st: st} }).GetByName("w")
			if err != nil {
				return err
			}
			for _, c := range [][]any{{"Add", 1}, {"Wipe"}, {"Tables"}, {"Add", 2}, {"Tables"}} {
				if _, err := s.Call(ctx, c[0].(string), c[1:]...); err != nil {
					return err
				}
			}
			return nil
		})
	require.NoError(t, err)
	var sum *Summary
	taken := sweepChecked(t, fe.models, func() error { sum, err = fe.SweepContext(context.Background()); return err })
	require.True(t, sum.Clean(), "violations: %v", sum.Violations)
	require.Positive(t, taken)
}
