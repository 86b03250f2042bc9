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
