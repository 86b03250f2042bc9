package explore_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstOfKind is the first violation of kind in sum, if any.
func firstOfKind(sum *explore.Summary, kind string) (explore.Violation, bool) {
	for _, v := range sum.Violations {
		if v.Kind == kind {
			return v, true
		}
	}
	return explore.Violation{}, false
}

// O3, C2 (issue 31): a history that only the interleaving at an await as
// it ran explains is reported as its own kind, naming the turn, its await
// and the request that came in during it, and what to do: the platform's
// batcher, fixed, whose Add answers the messages pending, those on their
// way upstream included.
func TestO3_AnInterleavingAtAnAwaitIsNamed(t *testing.T) {
	sum, err := explore.RunFunc(explore.Options{Seeds: 200, NoShrink: true}, flush(false))
	require.NoError(t, err)
	v, ok := firstOfKind(sum, explore.KindInterleaving)
	require.True(t, ok, "violations: %v", sum.Violations)
	assert.Equal(t, "FLUSHER/queue", v.Object)
	for _, want := range []string{
		"no order of its", "as atomic steps explains",
		"alarm delivery (retry 0)", "while it waited for a call to UPSTREAM/upstream.Send (its waiting point 1)",
		`and Add("c") ran meanwhile`, "State.BlockConcurrencyWhile", "--interleaving",
	} {
		assert.Contains(t, v.Message, want)
	}
	_, lin := firstOfKind(sum, explore.KindLinearizability)
	assert.False(t, lin, "the interleaving explains every failing history: none is reported as a plain linearizability violation")
}

// O3 (issue 31): the check-then-act zoo bugs are still found by the
// default strategy, and reported as interleavings at an await.
func TestO3_CheckThenActZooBugsAreFoundAsInterleavings(t *testing.T) {
	for _, name := range []string{"lost-update", "check-then-act"} {
		t.Run(name, func(t *testing.T) {
			b, ok := zoo.Lookup(name)
			require.True(t, ok)
			o := zooOptions(b, strategies[0], 1, 300)
			o.NoShrink, o.Interleaving = true, nil
			sum, err := explore.RunFunc(o, b.Buggy)
			require.NoError(t, err)
			v, ok := firstOfKind(sum, explore.KindInterleaving)
			require.True(t, ok, "violations: %v", sum.Violations)
			assert.Contains(t, v.Message, "let the object's input gate go while it waited for a call to")
			o.Interleaving = b.Interleaving
			sum, err = explore.RunFunc(o, b.Fixed)
			require.NoError(t, err)
			assert.Zero(t, sum.Total, "the fixed form, as it declares: %v", sum.Violations)
			if b.Interleaving != nil { // still found, by the driver's own check
				sum, err = explore.RunFunc(o, b.Buggy)
				require.NoError(t, err)
				_, ok := firstOfKind(sum, explore.KindFunc)
				assert.True(t, ok, "violations: %v", sum.Violations)
			}
		})
	}
}

// O3 (issue 31): declared meant to interleave, the same interleavings are
// no violation (the driver's own check, that no message is lost, judges
// the class), and a history is checked as it ran; the platform's batcher,
// which deletes what came in during its await, is still found by that
// check.
func TestO3_ADeclaredInterleavingIsJudgedByYourOwnChecks(t *testing.T) {
	sum, err := explore.RunFunc(explore.Options{Seeds: 200, NoShrink: true, Interleaving: []string{"alarm"}}, flush(false))
	require.NoError(t, err)
	assert.Zero(t, sum.Total, "%v", sum.Violations)
	assert.Equal(t, []string{"alarm"}, sum.Interleaving)
	sum, err = explore.RunFunc(explore.Options{Seeds: 200, NoShrink: true, Interleaving: []string{"FLUSHER.alarm"}}, flush(true))
	require.NoError(t, err)
	v, ok := firstOfKind(sum, explore.KindFunc)
	require.True(t, ok, "violations: %v", sum.Violations)
	assert.Contains(t, v.Message, "neither sent nor pending: lost")
}

// counts counts in storage, reading before an await (a sleep) and writing
// after it: a check-then-act across an await, unless declared.
type counts struct{ st *object.State }

func (c *counts) Methods() object.Methods {
	return object.Methods{"Like": object.Func(func(ctx context.Context) (int, error) {
		var n int
		if _, err := c.st.Storage().Get(ctx, "n", &n); err != nil {
			return 0, err
		}
		if err := c.st.Sleep(ctx, time.Second); err != nil {
			return 0, err
		}
		return n + 1, c.st.Storage().Put(ctx, "n", n+1)
	})}
}

// countsYAML likes twice at once.
const countsYAML = `name: counts
namespaces:
  COUNTS: counts
stubs:
  a: {namespace: COUNTS, object: post}
  b: {namespace: COUNTS, object: post}
calls:
  - concurrent:
      - {stub: a, method: Like}
      - {stub: b, method: Like}
`

// O3 (issue 31): a scenario file declares turns meant to interleave with
// explore.interleaving; a name its classes do not have is refused, naming
// the field, the value and what is allowed.
func TestO3_ExploreInterleavingInAScenario(t *testing.T) {
	classes := scenario.WithClasses(map[string]runtime.Constructor{"counts": func(st *object.State) object.Object { return &counts{st: st} }})
	sc, err := scenario.Parse("counts.yaml", []byte(countsYAML), classes)
	require.NoError(t, err)
	sum, err := explore.Run(sc, explore.Options{Seeds: 50, NoShrink: true})
	require.NoError(t, err)
	_, ok := firstOfKind(sum, explore.KindInterleaving)
	require.True(t, ok, "violations: %v", sum.Violations)

	sc, err = scenario.Parse("counts.yaml", []byte(countsYAML+"explore:\n  interleaving: [Like]\n"), classes)
	require.NoError(t, err)
	assert.Equal(t, []string{"Like"}, sc.Explore.Interleaving)
	sum, err = explore.Run(sc, explore.Options{Seeds: 50, NoShrink: true})
	require.NoError(t, err)
	assert.Zero(t, sum.Total, "%v", sum.Violations)
	assert.Equal(t, []string{"Like"}, sum.Interleaving)

	_, err = scenario.Parse("counts.yaml", []byte(countsYAML+"explore:\n  interleaving: [Lkie]\n"), classes)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `counts.yaml:12: explore.interleaving[0]: is "Lkie": want a method of a namespace's class (Method or NAMESPACE.Method), fetch, alarm, schedule or queue`)
	_, err = explore.Run(sc, explore.Options{Interleaving: []string{"Nope"}})
	require.ErrorIs(t, err, explore.ErrOptions)
	assert.Contains(t, err.Error(), `interleaving "Nope": want a method of a namespace's class of counts.yaml`)
	_, err = explore.RunFunc(explore.Options{Interleaving: []string{"not a name"}}, flush(false))
	require.ErrorIs(t, err, explore.ErrOptions)
}
