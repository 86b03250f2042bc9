package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gated is an object for the gate rules: a log of what ran, in order.
type gated struct {
	st  *object.State
	log *[]string
}

func (g *gated) Methods() object.Methods {
	return object.Methods{
		"Note": object.Func(func(ctx context.Context, s string) error { *g.log = append(*g.log, s); return nil }),
		// TxSleep sleeps inside a transaction: the transaction is one
		// storage operation, so nothing else runs meanwhile (rule L6).
		"TxSleep": object.Func(func(ctx context.Context) error {
			return g.st.Storage().Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
				*g.log = append(*g.log, "tx-start")
				if err := g.st.Sleep(ctx, time.Second); err != nil {
					return err
				}
				*g.log = append(*g.log, "tx-end")
				return tx.Put(ctx, "k", 1)
			})
		}),
		// Sleep sleeps outside any block: the gate opens (rule O3).
		"Sleep": object.Func(func(ctx context.Context) error {
			*g.log = append(*g.log, "sleep-start")
			err := g.st.Sleep(ctx, time.Second)
			*g.log = append(*g.log, "sleep-end")
			return err
		}),
		"Block": object.Func(func(ctx context.Context, fail bool) error {
			return g.st.BlockConcurrencyWhile(ctx, func(ctx context.Context) error {
				*g.log = append(*g.log, "block-start")
				if err := g.st.Sleep(ctx, time.Second); err != nil {
					return err
				}
				*g.log = append(*g.log, "block-end")
				if fail {
					return errors.New("init failed")
				}
				return nil
			})
		}),
		"Write": object.Func(func(ctx context.Context, k string, unconfirmed bool) error {
			if unconfirmed {
				return g.st.Storage().Put(ctx, k, 1, object.AllowUnconfirmed())
			}
			return g.st.Storage().Put(ctx, k, 1)
		}),
		"WriteSync": object.Func(func(ctx context.Context, k string) error {
			if err := g.st.Storage().Put(ctx, k, 1, object.AllowUnconfirmed()); err != nil {
				return err
			}
			return g.st.Storage().Sync(ctx)
		}),
	}
}

func gatedNS(rt *runtime.Runtime, log *[]string) *runtime.Namespace {
	return rt.Namespace("G", func(st *object.State) object.Object { return &gated{st: st, log: log} })
}

// whileRunning calls method on the object, and Note("other") half a second
// later through another stub, and returns the log.
func whileRunning(t *testing.T, method string, args ...any) []string {
	t.Helper()
	rt := newRuntime(t)
	var log []string
	ns := gatedNS(rt, &log)
	a, b := mustStub(t, ns, "g"), mustStub(t, ns, "g")
	run(t, rt, func(ctx context.Context) error {
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error { _, err := a.Call(ctx, method, args...); return err })
		g.Go(func(ctx context.Context) error {
			if err := rt.Sleep(ctx, 500*time.Millisecond); err != nil {
				return err
			}
			_, err := b.Call(ctx, "Note", "other")
			return err
		})
		return g.Wait()
	})
	return log
}

// L6: no other event reaches the object during a storage operation, even
// a transaction whose function sleeps; a plain sleep opens the gate (O3).
func TestL6_NoDeliveryDuringTransactionEvenAcrossSleep(t *testing.T) {
	assert.Equal(t, []string{"tx-start", "tx-end", "other"}, whileRunning(t, "TxSleep"))
	assert.Equal(t, []string{"sleep-start", "other", "sleep-end"}, whileRunning(t, "Sleep"))
}

// L6: BlockConcurrencyWhile keeps the gate closed across a sleep in fn.
func TestL6_BlockConcurrencyWhileHoldsTheGate(t *testing.T) {
	assert.Equal(t, []string{"block-start", "block-end", "other"}, whileRunning(t, "Block", false))
}

// L6: an error from BlockConcurrencyWhile's fn resets the object: the
// request fails with the reset error, not retried, and the reset counts.
func TestL6_BlockConcurrencyWhileErrorResets(t *testing.T) {
	rt, ns, se := failedBlock(t)
	assert.True(t, se.DurableObjectReset)
	assert.False(t, se.Retryable)
	assert.Equal(t, 1, ns.Resets(ns.IDFromName("g")))
	assert.Contains(t, rt.Trace(), "reason=block-concurrency-failed")
}

// L6: when BlockConcurrencyWhile's function fails, the object resets and
// the caller's message is the function's own error message, not words of
// dosim's. Expected value: real workerd 1.20261117.1, as issue 22 reports
// it (blockConcurrencyWhile(async () => { throw new Error("init
// failed") }): the caller's err.message is "init failed").
func TestL6_BlockConcurrencyWhileFailureGivesTheCallbacksMessage(t *testing.T) {
	_, ns, se := failedBlock(t)
	assert.Equal(t, "init failed", se.Msg)
	assert.True(t, se.DurableObjectReset)
	assert.False(t, se.Remote)
	assert.False(t, se.Retryable)
	assert.Equal(t, 1, ns.Resets(ns.IDFromName("g")))
}

// failedBlock calls a method whose BlockConcurrencyWhile function fails
// and returns the runtime, the namespace and the caller's error.
func failedBlock(t *testing.T) (*runtime.Runtime, *runtime.Namespace, *stub.Error) {
	t.Helper()
	rt := newRuntime(t)
	var log []string
	ns := gatedNS(rt, &log)
	s := mustStub(t, ns, "g")
	var callErr error
	run(t, rt, func(ctx context.Context) error {
		_, callErr = s.Call(ctx, "Block", true)
		return nil
	})
	var se *stub.Error
	require.ErrorAs(t, callErr, &se)
	return rt, ns, se
}

// writeFails is a plan failing the storage writes of method's first attempt.
func writeFails(method string) runtime.Option {
	return runtime.WithFaults(transport.Plan(transport.Rule{Method: method, Attempt: 1, Fault: transport.StorageWriteFails}))
}

// L7: a write failure loses the turn's writes, resets the object with the
// storage reason and discards the reply: the caller gets the reset error.
func TestL7_WriteFailureLosesWritesAndDiscardsReply(t *testing.T) {
	rt := newRuntime(t, writeFails("Write"))
	var log []string
	ns := gatedNS(rt, &log)
	s := mustStub(t, ns, "g")
	id := ns.IDFromName("g")
	var callErr error
	run(t, rt, func(ctx context.Context) error {
		_, callErr = s.Call(ctx, "Write", "k", false)
		return nil
	})
	var se *stub.Error
	require.ErrorAs(t, callErr, &se)
	assert.True(t, se.DurableObjectReset)
	assert.False(t, se.Retryable, "after delivery: not retried")
	assert.Contains(t, callErr.Error(), transport.ResetStorage.Message())
	assert.Empty(t, ns.Storage(id).Snapshot(), "the write vanished")
	assert.Equal(t, 1, ns.Resets(id))
	c := rt.Calls()[0]
	assert.Equal(t, transport.OutcomeNotRetryable, c.Outcome)
	require.Len(t, c.Attempts, 1)
	assert.Equal(t, 1, c.Attempts[0].LostWrites)
	assert.Equal(t, transport.StorageWriteFails, c.Attempts[0].Fault)
	assert.Contains(t, rt.Trace(), "reset reason=storage")
}

// L7: with AllowUnconfirmed the reply goes before the write is durable:
// the caller saw success, and the write is lost (the bug it models).
func TestL7_AllowUnconfirmedReplyGoesThenWriteIsLost(t *testing.T) {
	rt := newRuntime(t, writeFails("Write"))
	var log []string
	ns := gatedNS(rt, &log)
	s := mustStub(t, ns, "g")
	id := ns.IDFromName("g")
	run(t, rt, func(ctx context.Context) error {
		_, err := s.Call(ctx, "Write", "k", true)
		return err
	})
	assert.Empty(t, ns.Storage(id).Snapshot(), "the write vanished")
	c := rt.Calls()[0]
	assert.Equal(t, transport.OutcomeOK, c.Outcome, "the caller saw success")
	assert.Equal(t, 1, c.Attempts[0].LostWrites)
	assert.Equal(t, 1, ns.Resets(id))
}

// L7: Sync waits for unconfirmed writes and returns the write failure.
func TestL7_SyncReturnsWriteFailure(t *testing.T) {
	rt := newRuntime(t, writeFails("WriteSync"))
	var log []string
	ns := gatedNS(rt, &log)
	s := mustStub(t, ns, "g")
	var callErr error
	run(t, rt, func(ctx context.Context) error {
		_, callErr = s.Call(ctx, "WriteSync", "k")
		return nil
	})
	var se *stub.Error
	require.ErrorAs(t, callErr, &se)
	assert.True(t, se.DurableObjectReset, "the reset answered the caller first")
	assert.Empty(t, ns.Storage(ns.IDFromName("g")).Snapshot())
}

// L7: without the fault, writes are confirmed and kept; a fault on a turn
// that writes nothing leaves no trace in its record.
func TestL7_NoWriteNoFailure(t *testing.T) {
	rt := newRuntime(t, runtime.WithFaults(transport.Plan(transport.Rule{Method: "Note", Fault: transport.StorageWriteFails})))
	var log []string
	ns := gatedNS(rt, &log)
	s := mustStub(t, ns, "g")
	run(t, rt, func(ctx context.Context) error {
		if _, err := s.Call(ctx, "Note", "x"); err != nil {
			return err
		}
		_, err := s.Call(ctx, "Write", "k", false)
		return err
	})
	cs := rt.Calls()
	assert.Equal(t, transport.None, cs[0].Attempts[0].Fault)
	assert.Equal(t, transport.OutcomeOK, cs[1].Outcome)
	assert.Equal(t, map[string]any{"k": 1}, ns.Storage(ns.IDFromName("g")).Snapshot())
	assert.Zero(t, ns.Resets(ns.IDFromName("g")))
}
