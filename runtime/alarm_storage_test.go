package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// alarmKeeper sets, reads and deletes its alarm through its storage, in
// and out of transactions, and counts its deliveries.
type alarmKeeper struct {
	st    *object.State
	fired *int
}

func (a *alarmKeeper) Alarm(ctx context.Context, _ object.AlarmInfo) error { *a.fired++; return nil }

var errRollBack = errors.New("roll back")

func (a *alarmKeeper) Methods() object.Methods {
	s := func() *object.Storage { return a.st.Storage() }
	return object.Methods{
		"Arm": object.Func(func(ctx context.Context) error {
			return s().SetAlarm(ctx, a.st.Now().Add(time.Minute))
		}),
		"WipeAll": object.Func(func(ctx context.Context) error {
			if err := s().Put(ctx, "k", 1); err != nil {
				return err
			}
			return s().DeleteAll(ctx)
		}),
		"ArmInTxn": object.Func(func(ctx context.Context, commit bool) (bool, error) {
			var seen bool
			err := s().Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
				if err := tx.SetAlarm(ctx, a.st.Now().Add(time.Minute)); err != nil {
					return err
				}
				_, seen, _ = tx.GetAlarm(ctx)
				if !commit {
					return errRollBack
				}
				return nil
			})
			if errors.Is(err, errRollBack) {
				err = nil
			}
			return seen, err
		}),
		"DisarmInTxn": object.Func(func(ctx context.Context) error {
			return s().Transaction(ctx, func(ctx context.Context, tx *object.Storage) error { return tx.DeleteAlarm(ctx) })
		}),
		"Armed": object.Func(func(ctx context.Context) (bool, error) {
			_, ok, err := s().GetAlarm(ctx)
			return ok, err
		}),
	}
}

// run calls methods in order on one object, then lets two minutes pass,
// and returns the last call's result and the deliveries.
func runKeeper(t *testing.T, calls ...[]any) (any, int) {
	t.Helper()
	fired := 0
	rt := runtime.New()
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("KEEPER", func(st *object.State) object.Object { return &alarmKeeper{st: st, fired: &fired} })
	var last any
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		for _, c := range calls {
			s, err := ns.GetByName("k")
			if err != nil {
				return err
			}
			if last, err = s.Call(ctx, c[0].(string), c[1:]...); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, rt.Advance(2*time.Minute))
	return last, fired
}

// L8: deleteAll deletes the alarm too. The platform: "deleteAll() now
// deletes the alarm as well" from compatibility date 2026-02-24 (the
// Durable Objects changelog), and so workerd 1.20261117.1 does on both
// backends (issue 34, row 1).
func TestL8_DeleteAllDeletesTheAlarm(t *testing.T) {
	armed, fired := runKeeper(t, []any{"Arm"}, []any{"WipeAll"}, []any{"Armed"})
	assert.Equal(t, false, armed, "no alarm after deleteAll")
	assert.Zero(t, fired, "and it never fires")
}

// L8: the alarm can be set, read and deleted in a storage transaction
// (txn.setAlarm on the platform's types, workers-types' DurableObjectTransaction),
// and a transaction that rolls back rolls it back (issue 34, row 14).
func TestL8_TheAlarmInATransactionCommitsAndRollsBackWithIt(t *testing.T) {
	seen, fired := runKeeper(t, []any{"ArmInTxn", false})
	assert.Equal(t, true, seen, "the transaction sees the alarm it set")
	assert.Zero(t, fired, "rolled back: no alarm")

	_, fired = runKeeper(t, []any{"ArmInTxn", true})
	assert.Equal(t, 1, fired, "committed: the alarm fires")

	armed, fired := runKeeper(t, []any{"Arm"}, []any{"DisarmInTxn"}, []any{"Armed"})
	assert.Equal(t, false, armed)
	assert.Zero(t, fired, "deleted in a committed transaction")
}
