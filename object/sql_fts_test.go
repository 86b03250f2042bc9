package object_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Q2: a database with a full-text (FTS5) table or an R-tree restores from
// its snapshot: the tables their modules keep (the index, the nodes) are
// put back as they were taken, and a search finds what it found. An
// empty blob (FTS5 keeps some) restores as an empty blob, not NULL.
func TestQ2_AVirtualTableRestoresFromItsSnapshot(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		db := st.SQL()
		_, err := db.Exec(ctx, `CREATE VIRTUAL TABLE docs USING fts5(body);
			INSERT INTO docs (body) VALUES ('hello world'), ('goodbye moon'), ('hello moon');
			CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1);
			INSERT INTO boxes VALUES (1, 0, 10), (2, 5, 15);
			CREATE TABLE e (b BLOB); INSERT INTO e VALUES (x'')`)
		require.NoError(t, err)
		search := func() [][]any {
			c, err := db.Exec(ctx, "SELECT rowid, body FROM docs WHERE docs MATCH 'hello' ORDER BY rowid")
			require.NoError(t, err)
			b, err := db.Exec(ctx, "SELECT id FROM boxes WHERE x0 <= 7 AND x1 >= 7 ORDER BY id")
			require.NoError(t, err)
			e, err := db.Exec(ctx, "SELECT typeof(b), length(b) FROM e")
			require.NoError(t, err)
			return append(append(c.Values(), b.Values()...), e.Values()...)
		}
		want, snap := search(), st.Storage().Snapshot()
		require.NoError(t, st.Storage().Restore(snap))
		db = st.SQL()
		assert.Equal(t, want, search())
		assert.Equal(t, snap, st.Storage().Snapshot())
		return nil
	})
}
