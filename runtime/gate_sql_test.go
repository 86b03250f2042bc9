package runtime_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sqlAndKV is an object whose Book INSERTs a row and Puts a key in one
// turn; BookTx does the same inside SQL.Transaction.
func sqlAndKV(st *object.State) object.Object {
	insert := func(ctx context.Context, db *object.SQL, who string) error {
		_, err := db.Exec(ctx, "CREATE TABLE IF NOT EXISTS b (who TEXT); INSERT INTO b VALUES (?)", who)
		return err
	}
	return fnObj{
		"Book": object.Func(func(ctx context.Context, who string) error {
			if err := insert(ctx, st.SQL(), who); err != nil {
				return err
			}
			return st.Storage().Put(ctx, who, true)
		}),
		"BookTx": object.Func(func(ctx context.Context, who string) error {
			if err := st.SQL().Transaction(ctx, func(ctx context.Context, tx *object.SQL) error { return insert(ctx, tx, who) }); err != nil {
				return err
			}
			return st.Storage().Put(ctx, who, true)
		}),
	}
}

type fnObj object.Methods

func (f fnObj) Methods() object.Methods { return object.Methods(f) }

// rowsOf reads the table b of the object, or the error.
func rowsOf(t *testing.T, s *object.Storage) ([][]any, error) {
	t.Helper()
	c, err := s.QuerySQL(context.Background(), "SELECT who FROM b ORDER BY who")
	if err != nil {
		return nil, err
	}
	return c.Values(), nil
}

// Q2, L7: the SQL writes of a turn are confirmed with its key-value
// writes: when the write-failure fault strikes, the row vanishes with the
// key, the object resets and the caller gets the reset error, never a
// reply; the writes of earlier, confirmed turns stay.
func TestQ2_SQLWritesVanishWithTheTurnOnWriteFailure(t *testing.T) {
	for _, method := range []string{"Book", "BookTx"} {
		t.Run(method, func(t *testing.T) {
			rt := newRuntime(t, runtime.WithFaults(transport.Plan(
				transport.Rule{Method: method, Attempt: 1, Fault: transport.StorageWriteFails, Call: 2})))
			ns := rt.Namespace("S", sqlAndKV)
			id := ns.IDFromName("s")
			var errs []error
			run(t, rt, func(ctx context.Context) error {
				for _, who := range []string{"alice", "bob"} {
					_, err := mustStub(t, ns, "s").Call(ctx, method, who)
					errs = append(errs, err)
				}
				return nil
			})
			require.NoError(t, errs[0], "the first call's writes are confirmed")
			var se *stub.Error
			require.ErrorAs(t, errs[1], &se)
			assert.True(t, se.DurableObjectReset)
			assert.Contains(t, errs[1].Error(), transport.ResetStorage.Message())
			assert.Equal(t, 1, ns.Resets(id))

			st := ns.Storage(id)
			rows, err := rowsOf(t, st)
			require.NoError(t, err)
			assert.Equal(t, [][]any{{"alice"}}, rows, "bob's row vanished with his key")
			var ok bool
			found, err := st.Get(context.Background(), "bob", &ok)
			require.NoError(t, err)
			assert.False(t, found, "bob's key vanished")
			found, err = st.Get(context.Background(), "alice", &ok)
			require.NoError(t, err)
			assert.True(t, found)
			assert.Equal(t, 2, rt.Calls()[1].Attempts[0].LostWrites, "the row and the key")
		})
	}
}

// Q2, L7: without the fault (the journal on, as the plan names it for
// another method) both the row and the key stay.
func TestQ2_SQLWritesStayWithTheTurnWithoutFailure(t *testing.T) {
	rt := newRuntime(t, writeFails("Other"))
	ns := rt.Namespace("S", sqlAndKV)
	id := ns.IDFromName("s")
	run(t, rt, func(ctx context.Context) error {
		for _, m := range []string{"Book", "BookTx"} {
			if _, err := mustStub(t, ns, "s").Call(ctx, m, m); err != nil {
				return err
			}
		}
		return nil
	})
	st := ns.Storage(id)
	rows, err := rowsOf(t, st)
	require.NoError(t, err)
	assert.Equal(t, [][]any{{"Book"}, {"BookTx"}}, rows)
	assert.Equal(t, 2, st.Len())
	assert.Equal(t, 0, ns.Resets(id))
	// Everything was confirmed: a reset now loses nothing.
	run(t, rt, func(ctx context.Context) error { return ns.Reset(id, transport.ResetCodeUpdate) })
	rows, err = rowsOf(t, st)
	require.NoError(t, err)
	assert.Len(t, rows, 2)
}
