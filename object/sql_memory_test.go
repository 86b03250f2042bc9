//go:build !dosim_nosql

package object

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// TestQ1_SQLConnectionKeepsASmallLookaside checks the defect of issue 13:
// every object's database took SQLite's default lookaside buffer (1,200
// × 40 bytes, written through at once), about half of the ~110 KB an
// object that used SQL kept resident. Its connection now has at most
// sqlLookasideSlots slots, which the high-water mark of slots in use
// shows: with the default, one CREATE TABLE and INSERT use far more.
func TestQ1_SQLConnectionKeepsASmallLookaside(t *testing.T) {
	require.True(t, sqlLookasideApplied, "sqlite3_config(SQLITE_CONFIG_LOOKASIDE) was refused")
	db, err := openSQL(nil)
	require.NoError(t, err)
	defer db.close()
	ctx := context.Background()
	_, err = db.Exec(ctx, "CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER); INSERT INTO t VALUES ('a', 1)")
	require.NoError(t, err)
	c, err := db.Exec(ctx, "SELECT v FROM t WHERE k = ?", "a")
	require.NoError(t, err)
	var v int
	require.NoError(t, c.One(&v))
	require.Equal(t, 1, v)

	st, ok := db.conn.(interface {
		Status(op sqlite.DBStatusOp, reset bool) (current, high int, err error)
	})
	require.True(t, ok, "the driver's connection has no Status method")
	_, high, err := st.Status(sqlite.DBStatusLookasideUsed, false)
	require.NoError(t, err)
	require.Positive(t, high, "the connection has no lookaside at all")
	require.LessOrEqual(t, high, sqlLookasideSlots, "lookaside slots used")
}
