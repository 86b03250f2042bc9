package stub_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// notebook is an object that writes down, in memory, the order in which
// calls reach it.
type notebook struct{ got *[]string }

func (n *notebook) Methods() object.Methods {
	return object.Methods{"Note": object.Func(func(ctx context.Context, s string) error {
		*n.got = append(*n.got, s)
		return nil
	})}
}

// notes runs fn in a runtime with seed and rules and returns the order in
// which Note calls reached the object, and the call records.
func notes(t *testing.T, seed uint64, fn func(ctx context.Context, ns *runtime.Namespace) error, rules ...transport.Rule) ([]string, []runtime.CallRecord) {
	t.Helper()
	var got []string
	rt := runtime.New(runtime.WithSeed(seed), runtime.WithLogger(zaptest.NewLogger(t)), runtime.WithFaults(transport.Plan(rules...)))
	defer func() { require.NoError(t, rt.Close()) }()
	ns := rt.Namespace("NOTES", func(*object.State) object.Object { return &notebook{got: &got} })
	require.NoError(t, rt.Run(func(ctx context.Context) error { return fn(ctx, ns) }))
	return got, rt.Calls()
}

func mint(t *testing.T, ns *runtime.Namespace) *stub.Stub {
	s, err := ns.GetByName("n")
	require.NoError(t, err)
	return s
}

// delayFirst delays the first call's first attempt by 3 s.
var delayFirst = transport.Rule{Method: "Note", Call: 1, Attempt: 1, Delay: 3 * time.Second}

// twoCalls makes call "a" (in a task of its own), then 1 ms later call
// "b", through first and second.
func twoCalls(ctx context.Context, rt *runtime.Runtime, first, second *stub.Stub) error {
	p := first.Start(ctx, "Note", "a")
	if err := rt.Sleep(ctx, time.Millisecond); err != nil {
		return err
	}
	if _, err := second.Call(ctx, "Note", "b"); err != nil {
		return err
	}
	_, err := p.Await()
	return err
}

// L1: calls through one stub arrive in the order they were made, even
// when the first is delayed 3 s and the second not at all.
func TestL1_OneStubDeliversInOrder(t *testing.T) {
	got, calls := notes(t, 1, func(ctx context.Context, ns *runtime.Namespace) error {
		s := mint(t, ns)
		return twoCalls(ctx, ns.Runtime(), s, s)
	}, delayFirst)
	assert.Equal(t, []string{"a", "b"}, got)
	require.Len(t, calls, 2)
	assert.Equal(t, 3*time.Second, calls[1].End, "b waited behind a on the stub's connection")
}

// L1: calls through two stubs have no order: the undelayed second call
// overtakes the delayed first.
func TestL1_TwoStubsHaveNoOrder(t *testing.T) {
	got, _ := notes(t, 1, func(ctx context.Context, ns *runtime.Namespace) error {
		return twoCalls(ctx, ns.Runtime(), mint(t, ns), mint(t, ns))
	}, delayFirst)
	assert.Equal(t, []string{"b", "a"}, got)
}

// L1: arrivals due at the same instant keep the order the calls were made
// in, whatever order the seeded kernel fires their timers in.
func TestL1_SameInstantArrivalsKeepTheirOrder(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		got, _ := notes(t, seed, func(ctx context.Context, ns *runtime.Namespace) error {
			s := mint(t, ns)
			return twoCalls(ctx, ns.Runtime(), s, s)
		}, delayFirst, transport.Rule{Method: "Note", Call: 2, Attempt: 1, Delay: 3*time.Second - time.Millisecond})
		assert.Equal(t, []string{"a", "b"}, got, "seed %d", seed)
	}
}

// L1: a retry travels on a fresh connection, so a later call of the same
// stub may overtake it.
func TestL1_RetryMayBeOvertaken(t *testing.T) {
	got, calls := notes(t, 1, func(ctx context.Context, ns *runtime.Namespace) error {
		s := mint(t, ns)
		p := s.Start(ctx, "Note", "a")
		if err := ns.Runtime().Sleep(ctx, 600*time.Millisecond); err != nil { // a's retry is on its way (backoff <= 500 ms)
			return err
		}
		if _, err := s.Call(ctx, "Note", "b"); err != nil {
			return err
		}
		_, err := p.Await()
		return err
	}, transport.Rule{Method: "Note", Call: 1, Attempt: 1, Fault: transport.NotDelivered},
		transport.Rule{Method: "Note", Call: 1, Attempt: 2, Delay: 3 * time.Second})
	assert.Equal(t, []string{"b", "a"}, got)
	require.Len(t, calls, 2)
	assert.Equal(t, transport.OutcomeRecovered, calls[0].Outcome)
}

// L2: a call that fails with a link error breaks its stub: every later
// call fails at once with the same error, makes no attempt and reaches
// nothing (outcome broken-stub). A fresh stub works.
func TestL2_LinkFailureBreaksTheStub(t *testing.T) {
	w := newWorld(t, 1, transport.Rule{Method: "Add", Call: 1, Attempt: 1, Fault: transport.LoseResponse})
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, first := s.Call(ctx, "Add") // reply lost, retry refused as a duplicate
		require.Error(t, first)
		assert.Equal(t, first, s.Broken())
		_, err := s.Call(ctx, "Set", 7)
		assertBrokenBy(t, first, err, "Set")
		fresh := w.stub(t)
		assert.NoError(t, fresh.Broken())
		_, err = fresh.Call(ctx, "Add")
		return err
	}))
	calls := w.rt.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, transport.OutcomeDuplicateRejected, calls[0].Outcome)
	assert.Equal(t, transport.OutcomeBrokenStub, calls[1].Outcome)
	assert.Empty(t, calls[1].Attempts, "a call on a broken stub makes no attempt")
	assert.Contains(t, calls[1].Err, "PROBE/p Set: broken stub, not sent: the call of Add failed at attempt 1: ")
	assert.Equal(t, transport.OutcomeOK, calls[2].Outcome)
	assert.Equal(t, 0, w.stored(t, "v"), "Set never reached the object")
	assert.Equal(t, 2, w.stored(t, "n"))
}

// L2: the object's own answers (a Remote error, a setup error such as no
// such method) do not break a stub; neither does a call its caller
// cancelled.
func TestL2_ObjectErrorsAndCancellationDoNotBreak(t *testing.T) {
	w := newWorld(t, 1)
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Fail")
		var e *stub.Error
		require.ErrorAs(t, err, &e)
		assert.True(t, e.Remote)
		_, err = s.Call(ctx, "NoSuchMethod")
		require.ErrorIs(t, err, object.ErrNoMethod)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = s.Call(cctx, "Set", 1)
		require.ErrorIs(t, err, context.Canceled)
		assert.NoError(t, s.Broken())
		_, err = s.Call(ctx, "Set", 2)
		return err
	}))
	assert.Equal(t, 2, w.stored(t, "v"))
}

// L2: calls queued behind the failing one (sent on the stub's connection,
// not yet arrived) fail at once, the moment the stub breaks, and never
// arrive: one attempt each, not delivered.
func TestL2_QueuedCallsFailAtOnce(t *testing.T) {
	w := newWorld(t, 1,
		transport.Rule{Method: "Add", Attempt: 1, Fault: transport.Overloaded, Delay: time.Second},
		transport.Rule{Method: "Set", Attempt: 1, Delay: 5 * time.Second})
	s := w.stub(t)
	var first, queued error
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		p := s.Start(ctx, "Add")
		if err := w.rt.Sleep(ctx, time.Millisecond); err != nil {
			return err
		}
		_, queued = s.Call(ctx, "Set", 7)
		_, first = p.Await()
		return nil
	}))
	require.Error(t, first)
	assertBrokenBy(t, first, queued, "Set")
	calls := w.rt.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, transport.OutcomeNotRetryable, calls[0].Outcome)
	c := calls[1]
	assert.Equal(t, transport.OutcomeBrokenStub, c.Outcome)
	assert.Equal(t, time.Second, c.End, "it failed when the stub broke, not at its own arrival (5 s)")
	require.Len(t, c.Attempts, 1)
	assert.False(t, c.Attempts[0].Delivered)
	assert.Equal(t, 0, w.stored(t, "v"), "the queued Set never reached the object")
}

// L2 with S1: a stub that arrives as a call's result breaks by the same
// rule.
func TestL2_StubsFromResultsBreakToo(t *testing.T) {
	w := newWorld(t, 3, rule("Whoami", 1, transport.LoseRequest))
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		v, err := s.Call(ctx, "Session", "ada")
		require.NoError(t, err)
		sess := v.(*stub.Stub)
		_, first := sess.Call(ctx, "Whoami") // one attempt, lost: not-replayable
		require.Error(t, first)
		_, err = sess.Call(ctx, "Add")
		assertBrokenBy(t, first, err, "Add")
		assert.NoError(t, s.Broken(), "the stub the session came through still works")
		return nil
	}))
	assert.Equal(t, transport.OutcomeBrokenStub, w.rt.Calls()[2].Outcome)
	assert.Equal(t, 0, w.stored(t, "n"))
}
