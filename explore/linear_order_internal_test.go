package explore

import (
	"fmt"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// orderOp is an operation of the register the property below checks: a
// write of val, or a read that saw val.
type orderOp struct {
	write bool
	val   int
}

// TestC4_InOrderHistoriesGetPorcupinesVerdict: stepInOrder, the check of
// a history whose operations do not overlap, gives porcupine's verdict
// and asks the model the same steps in the same order, so what a step
// records (the checker's first inexact step, its memo of replays) is
// what porcupine's search would have left.
func TestC4_InOrderHistoriesGetPorcupinesVerdict(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) orderOp {
			return orderOp{write: rapid.Bool().Draw(t, "write"), val: rapid.IntRange(0, 2).Draw(t, "val")}
		}), 0, 12).Draw(t, "ops")
		var events []porcupine.Event
		for i, op := range ops {
			events = append(events,
				porcupine.Event{ClientId: i, Kind: porcupine.CallEvent, Value: op, Id: i},
				porcupine.Event{ClientId: i, Kind: porcupine.ReturnEvent, Value: op, Id: i})
		}
		require.True(t, inOrder(events))
		var steps [2][]string
		model := func(k int) porcupine.Model {
			return porcupine.Model{
				Init: func() any { return 0 },
				Step: func(st, in, _ any) (bool, any) {
					op := in.(orderOp)
					steps[k] = append(steps[k], fmt.Sprintf("%d %+v", st, op))
					if op.write {
						return true, op.val
					}
					return st.(int) == op.val, st
				},
			}
		}
		got := stepInOrder(model(0), events)
		want := porcupine.CheckEvents(model(1), events)
		require.Equal(t, want, got, "ops %+v", ops)
		require.Equal(t, steps[1], steps[0], "the steps asked of the model")
	})
}

// TestC4_OverlappingHistoriesAreNotInOrder: a history in which an
// operation begins before another ends, or one never returns, goes to
// porcupine's search.
func TestC4_OverlappingHistoriesAreNotInOrder(t *testing.T) {
	call := func(id int) porcupine.Event { return porcupine.Event{Kind: porcupine.CallEvent, Id: id} }
	ret := func(id int) porcupine.Event { return porcupine.Event{Kind: porcupine.ReturnEvent, Id: id} }
	require.True(t, inOrder([]porcupine.Event{call(0), ret(0), call(1), ret(1)}))
	require.False(t, inOrder([]porcupine.Event{call(0), call(1), ret(0), ret(1)}), "overlapping")
	require.False(t, inOrder([]porcupine.Event{call(0), call(1), ret(1), ret(0)}), "nested")
	require.False(t, inOrder([]porcupine.Event{call(0), ret(0), call(1)}), "one never returns")
	require.False(t, inOrder([]porcupine.Event{ret(0), call(0)}), "a return first")
}
