package explore

import "github.com/anishathalye/porcupine"

// inOrder reports whether a history's events leave one order to check:
// each operation ends before the next begins (each call is followed by
// its own return). Most do: an object's turns run one at a time, and an
// operation spans several only when a call is retried or its reply lost
// while another runs. Of 2,000 booth seeds' histories 81% are, of
// seat-map's and outbox-queue's all (counted with a temporary counter).
func inOrder(events []porcupine.Event) bool {
	if len(events)%2 != 0 {
		return false
	}
	for i := 0; i < len(events); i += 2 {
		call, ret := events[i], events[i+1]
		if call.Kind != porcupine.CallEvent || ret.Kind != porcupine.ReturnEvent || call.Id != ret.Id {
			return false
		}
	}
	return true
}

// stepInOrder is porcupine's check of a history inOrder: the model steps
// through its operations in their one order, and the history is
// linearizable if every step is legal. Porcupine's search would make the
// same steps in the same order (the only operation it can linearize first
// is the one whose call comes first, and a step it refuses leaves it
// nothing else to try), but it checks each history on a goroutine of its
// own, whose stack grows again to a replay's depth, and waits for it: a
// booth seed spent 2% of its CPU growing those stacks. It takes no time
// limit (checker.run's timeout): it makes one step an operation.
// TestC3_InOrderHistoriesGetPorcupinesVerdict holds the two verdicts equal.
func stepInOrder(m porcupine.Model, events []porcupine.Event) bool {
	st := m.Init()
	for i := 0; i < len(events); i += 2 {
		var ok bool
		if ok, st = m.Step(st, events[i].Value, events[i+1].Value); !ok {
			return false
		}
	}
	return true
}
