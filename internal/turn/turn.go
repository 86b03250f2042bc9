// Package turn lets the code an object turn runs find the turn it runs in:
// the object's state (StateFrom), its input gate (HoldGate), and the
// history a replayed turn answers its calls from (CallReplayer). Package
// runtime's turn types implement the interfaces; packages object, agent and
// runtime ask through them, and none of them needs to name another's type.
package turn

import (
	"context"

	"github.com/dosim/dosim/internal/sched"
)

// Turn is implemented by the Work of a task that runs an object turn (a
// request, an alarm, a scheduled or queued task): S is *object.State,
// which this package, below package object, cannot name. Package object
// asks for Turn[*object.State] (StateFrom), and package runtime's turn
// types say at compile time that they implement it.
type Turn[S any] interface {
	// TurnState returns the State of the object the turn runs in.
	TurnState() S
}

// CallReplayer is implemented by the Work of a task that runs an object
// turn: a call the turn makes through a stub of another runtime while the
// turn is replayed alone (runtime.Replay) is answered from the turn's
// history instead of being sent. ok is false when the turn is not being
// replayed.
type CallReplayer interface {
	ReplayCall(namespace, object, method string, args []any) (v any, err error, ok bool)
}

// StateFrom returns the state of the object whose turn runs on ctx's
// task (package object calls it as StateFrom[*object.State]); ok is false
// outside an object turn.
func StateFrom[S any](ctx context.Context) (st S, ok bool) {
	t := sched.FromContext(ctx)
	if t == nil {
		return st, false
	}
	tu, ok := t.Work().(Turn[S])
	if !ok {
		return st, false
	}
	return tu.TurnState(), true
}

// GateHolder is implemented by the Work of a task that runs an object
// turn (sched.Work): HoldGate runs fn with the turn's input gate kept
// closed.
type GateHolder interface {
	HoldGate(fn func() error) error
}

// HoldGate runs fn with the input gate of the turn on ctx's task kept
// closed: a sleep or an awaited call inside fn does not open it (rule L6,
// BlockConcurrencyWhile and Transaction). Outside a turn it just runs fn.
func HoldGate(ctx context.Context, fn func() error) error {
	if t := sched.FromContext(ctx); t != nil {
		if g, ok := t.Work().(GateHolder); ok {
			return g.HoldGate(fn)
		}
	}
	return fn()
}
