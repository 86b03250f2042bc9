package object_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Q2: a snapshot reads what the database holds, whatever was snapshotted
// of the same bytes before (sqlImages): inside a Transaction the rows
// written are not yet in the file, and the snapshot sees them all the
// same; after a rollback it sees them gone.
func TestQ2_ASnapshotInsideATransactionSeesItsWrites(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		db := st.SQL()
		_, err := db.Exec(ctx, "CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1)")
		require.NoError(t, err)
		rows := func() []any {
			e, _ := st.Storage().Snapshot()[object.SQLSnapshotPrefix+"t"].(map[string]any)
			r, _ := e["rows"].([]any)
			return r
		}
		before := rows()
		require.Len(t, before, 1)
		err = db.Transaction(ctx, func(ctx context.Context, tx *object.SQL) error {
			_, err := tx.Exec(ctx, "INSERT INTO t VALUES (2)")
			require.NoError(t, err)
			assert.Len(t, rows(), 2, "the snapshot inside the transaction")
			return context.Canceled // roll it back
		})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, before, rows(), "the snapshot after the rollback")
		return nil
	})
}

// Q2: what a snapshot returns is the caller's own: changing it changes
// no later snapshot of the same bytes (sqlImages keeps a copy).
func TestQ2_ASnapshotIsItsCallersOwn(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		_, err := st.SQL().Exec(ctx, "CREATE TABLE t (n INTEGER, b BLOB); INSERT INTO t VALUES (1, x'01')")
		require.NoError(t, err)
		first := st.Storage().Snapshot()
		want := st.Storage().Snapshot()
		e := first[object.SQLSnapshotPrefix+"t"].(map[string]any)
		row := e["rows"].([]any)[0].([]any)
		row[0], row[1].([]byte)[0] = int64(7), 9
		e["schema"] = "changed"
		assert.Equal(t, want, st.Storage().Snapshot())
		return nil
	})
}

// Q2: a restore puts back each value as the snapshot gives it: an
// integer, a float, a text and a blob that print alike restore apart
// (sqlImages keys a snapshot by its values' types too).
func TestQ2_RestoreKeepsEachValuesType(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		_, err := st.SQL().Exec(ctx, "CREATE TABLE t (v)")
		require.NoError(t, err)
		snap := st.Storage().Snapshot()
		for _, c := range []struct {
			v    any
			kind string
		}{{int64(1), "integer"}, {float64(1), "real"}, {"1", "text"}, {[]byte("1"), "blob"}, {int64(2), "integer"}} {
			e := snap[object.SQLSnapshotPrefix+"t"].(map[string]any)
			e["rows"] = []any{[]any{c.v}}
			require.NoError(t, st.Storage().Restore(snap))
			got, err := st.SQL().Exec(ctx, "SELECT typeof(v), v FROM t")
			require.NoError(t, err)
			assert.Equal(t, [][]any{{c.kind, c.v}}, got.Values(), "%T %v", c.v, c.v)
		}
		return nil
	})
}

// Q4: the size limit holds on a database restored from a snapshot as on
// a new one, and fails the statement that grows past it, inside a
// Transaction too.
func TestQ4_TheSizeLimitHoldsAfterARestore(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		pages := func() any {
			c, err := st.SQL().Exec(ctx, "PRAGMA max_page_count")
			require.NoError(t, err)
			return c.Values()[0][0]
		}
		assert.Equal(t, int64(object.DefaultSQLMaxBytes/4096), pages(), "a new database")
		_, err := st.SQL().Exec(ctx, "CREATE TABLE big (b BLOB); INSERT INTO big VALUES (zeroblob(1000))")
		require.NoError(t, err)
		require.NoError(t, st.Storage().Restore(st.Storage().Snapshot()))
		assert.Equal(t, int64(object.DefaultSQLMaxBytes/4096), pages(), "a restored database")
		err = st.SQL().Transaction(ctx, func(ctx context.Context, tx *object.SQL) error {
			_, err := tx.Exec(ctx, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 11) INSERT INTO big SELECT zeroblob(1000000) FROM n")
			assert.ErrorContains(t, err, "DefaultSQLMaxBytes", "the statement fails, not the commit")
			return err
		})
		assert.ErrorIs(t, err, object.ErrSQL)
		return nil
	})
}

// Q2: a restored database reads as a new connection over the restored
// bytes: the restore's own inserts are in no count a statement reads.
func TestQ2_ARestoredDatabaseCountsNoWritesOfItsRestore(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		_, err := st.SQL().Exec(ctx, "CREATE TABLE t (n INTEGER PRIMARY KEY); INSERT INTO t VALUES (5), (9)")
		require.NoError(t, err)
		require.NoError(t, st.Storage().Restore(st.Storage().Snapshot()))
		c, err := st.SQL().Exec(ctx, "SELECT changes(), total_changes(), last_insert_rowid(), count(*) FROM t")
		require.NoError(t, err)
		assert.Equal(t, [][]any{{int64(0), int64(0), int64(0), int64(2)}}, c.Values())
		return nil
	})
}
