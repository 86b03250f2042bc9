package object_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orderSchema has a table with hidden rowids (seats, as the platform's
// seat-booking tutorial declares it), one whose rowid is a column (runs)
// and one without rowids (tags).
const orderSchema = `CREATE TABLE seats (seatId TEXT PRIMARY KEY, occupant TEXT);
CREATE TABLE runs (id INTEGER PRIMARY KEY, what TEXT);
CREATE TABLE tags (tag TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
INSERT INTO seats VALUES ('5A', NULL), ('10A', NULL), ('7B', 'ada');
DELETE FROM seats WHERE seatId = '5A';
INSERT INTO seats VALUES ('5A', 'bob');
INSERT INTO runs (id, what) VALUES (9, 'x'), (3, 'y');
INSERT INTO tags VALUES ('b', 1), ('a', 2)`

// reads reads every table as a SELECT without ORDER BY does, with the
// rowids.
func reads(ctx context.Context, t *testing.T, db *object.SQL) [][]any {
	var out [][]any
	for _, q := range []string{"SELECT rowid, seatId, occupant FROM seats", "SELECT id, what FROM runs", "SELECT tag, n FROM tags"} {
		c, err := db.Exec(ctx, q)
		require.NoError(t, err)
		out = append(out, c.Values()...)
	}
	return out
}

// Q2, C1: a snapshot in order (what the explorer's model replays turns
// from) restores each table so that a SELECT without ORDER BY reads its
// rows in the order, and under the rowids, the table it was taken from
// did, and a new row takes the rowid it would have there. Snapshot, for
// tests and verify, keeps its rows sorted by value and no rowids.
func TestQ2_ARestoredTableReadsInTheOrderItWasTakenIn(t *testing.T) {
	var want, got [][]any
	var snap, plain map[string]any
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		db := st.SQL()
		_, err := db.Exec(ctx, orderSchema)
		require.NoError(t, err)
		want = reads(ctx, t, db)
		snap, plain = object.Hosting(seal.Key{}).SnapshotInOrder(st.Storage()), st.Storage().Snapshot()
		return nil
	})
	require.Equal(t, []any{"5A", "bob"}, want[2][1:], "the row put back last reads last")
	seats := snap[object.SQLSnapshotPrefix+"seats"].(map[string]any)
	assert.Len(t, seats["rowids"], 3)
	assert.NotContains(t, plain[object.SQLSnapshotPrefix+"seats"], "rowids")
	assert.Nil(t, snap[object.SQLSnapshotPrefix+"tags"].(map[string]any)["rowids"], "a table without rowids has none")

	var next [][]any
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		require.NoError(t, st.Storage().Restore(snap))
		db := st.SQL()
		got = reads(ctx, t, db)
		_, err := db.Exec(ctx, "INSERT INTO seats VALUES ('1C', NULL)")
		require.NoError(t, err)
		c, err := db.Exec(ctx, "SELECT rowid FROM seats WHERE seatId = '1C'")
		require.NoError(t, err)
		next = c.Values()
		return nil
	})
	assert.Equal(t, want, got)
	assert.Equal(t, [][]any{{int64(5)}}, next, "the next rowid is the one after the last, as in the table taken")
}

// C1: a snapshot to read (the runtime's outcomes, which the checker only
// reads) holds the storage's own values and the dump kept of the same SQL
// bytes, and is what a snapshot in order is; the storage never changes a
// value it holds, so what the snapshot read stays as it was after writes
// that replace, change inside a transaction or delete its entries, and
// after a copying snapshot of the same bytes is changed by its holder.
func TestC1_ASnapshotToReadIsASnapshotInOrderThatLaterWritesLeaveAlone(t *testing.T) {
	h := object.Hosting(seal.Key{})
	var shared, inOrder map[string]any
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		s := st.Storage()
		_, err := st.SQL().Exec(ctx, orderSchema)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, "task", map[string]any{"n": 1, "tags": []any{"a"}}))
		require.NoError(t, s.Put(ctx, "gone", "soon"))
		inOrder = h.SnapshotInOrder(s) // the dump is kept now: the next one shares it
		shared = h.SnapshotToRead(s)
		assert.Equal(t, inOrder, shared)
		copied := h.SnapshotInOrder(s) // of the same bytes: a copy, which its holder may change
		copied[object.SQLSnapshotPrefix+"runs"].(map[string]any)["rows"].([]any)[0] = "changed"
		copied["task"].(map[string]any)["n"] = 9

		require.NoError(t, s.Put(ctx, "task", map[string]any{"n": 2}))
		_, err = s.Delete(ctx, "gone")
		require.NoError(t, err)
		require.NoError(t, s.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
			return tx.Put(ctx, "task", map[string]any{"n": 3, "tags": []any{"b"}})
		}))
		_, err = st.SQL().Exec(ctx, "UPDATE seats SET occupant = 'eve'")
		require.NoError(t, err)
		return nil
	})
	assert.Equal(t, inOrder, shared, "what a snapshot to read holds does not change under later writes")
	assert.Equal(t, map[string]any{"n": 1, "tags": []any{"a"}}, shared["task"])
}
