//go:build !dosim_nosql

package object

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestQ1_SQLConnectionKeepsASmallLookaside checks the defect of issue 13:
// every object's database took SQLite's default lookaside buffer (1,200
// × 40 bytes, written through at once), about half of the ~110 KB an
// object that used SQL kept resident. Its connection now has a buffer of
// 2 KB at most (sqlLookasideSlots, and what the allocator's block holds
// past them), which the high-water mark of slots in use
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
	require.LessOrEqual(t, high, 2048/sqlLookasideSize, "lookaside slots used: a buffer of 2 KB at most")
}

// TestQ1_AClosedDatabaseIsCollected checks the leak found exploring the booth
// example: modernc.org/sqlite keeps a function registered on a driver for
// the program's life, and dosim registered random(), randomblob() and
// dosim_now() on a new driver for each database, their closures holding
// the database, its host and so its whole runtime: a 20,000-seed sweep of
// booth.yaml reached 660 MB. A database is collected once closed, and a
// closed database's driver serves the next one.
func TestQ1_AClosedDatabaseIsCollected(t *testing.T) {
	open := func() weak.Pointer[SQL] {
		db, err := openSQL(nil)
		require.NoError(t, err)
		c, err := db.Exec(context.Background(), "SELECT random(), length(randomblob(3)), datetime('now')")
		require.NoError(t, err)
		require.Equal(t, 1, c.Len())
		db.close()
		return weak.Make(db)
	}
	first := open()
	for range 3 {
		open()
	}
	runtime.GC()
	require.Nil(t, first.Value(), "a closed database is still reachable")
	sqlDrivers.mu.Lock()
	free := len(sqlDrivers.free)
	sqlDrivers.mu.Unlock()
	require.GreaterOrEqual(t, free, 1, "the closed databases' drivers are back in the pool")
}

// TestQ1_AnUnclosedDatabaseIsCollectedToo: a database nobody closed (an
// object's storage dropped without its runtime's Close) is collected, and
// its cleanup closes the connection and frees the driver.
func TestQ1_AnUnclosedDatabaseIsCollectedToo(t *testing.T) {
	free := func() int {
		sqlDrivers.mu.Lock()
		defer sqlDrivers.mu.Unlock()
		return len(sqlDrivers.free)
	}
	var open int
	w := func() weak.Pointer[SQL] {
		db, err := openSQL(nil)
		require.NoError(t, err)
		open = free()
		_, err = db.Exec(context.Background(), "CREATE TABLE t (v INTEGER)")
		require.NoError(t, err)
		return weak.Make(db)
	}()
	runtime.GC()
	require.Nil(t, w.Value(), "an unclosed database is kept alive by its driver")
	require.Eventually(t, func() bool {
		runtime.GC()
		return free() > open
	}, 10*time.Second, time.Millisecond, "the cleanup gave the driver back")
}

// The action codes sql_written.go counts writes by are SQLite's.
func TestQ1_TheWriteActionCodesAreSQLites(t *testing.T) {
	require.Equal(t, int32(sqlite3.SQLITE_INSERT), int32(sqlAuthInsert))
	require.Equal(t, int32(sqlite3.SQLITE_UPDATE), int32(sqlAuthUpdate))
}

// Reading a table's indexes for RowsWritten spends none of the object's
// statement's steps (SQLMaxSteps), and a DROP TABLE whose foreign-key
// actions update its rows names them as SQLite did while they ran (its
// own string is freed by the end of the statement): the count is the same
// on every database.
func TestQ1_CountingWritesSpendsNoStepsAndKeepsItsNames(t *testing.T) {
	ctx := context.Background()
	open := func() *SQL {
		db, err := openSQL(nil)
		require.NoError(t, err)
		t.Cleanup(db.close)
		return db
	}
	db := open()
	_, err := db.Exec(ctx, "CREATE TABLE steps_t (a INTEGER, b INTEGER)")
	require.NoError(t, err)
	for i := range 40 { // enough indexes that reading them takes thousands of steps
		_, err := db.Exec(ctx, fmt.Sprintf("CREATE INDEX steps_%d ON steps_t (a, b, a + %d)", i, i))
		require.NoError(t, err)
	}
	db.steps, db.stopped = 7, ""
	ti, err := db.readTableIndexes("steps_t")
	require.NoError(t, err)
	require.Len(t, ti.indexes, 40)
	require.Equal(t, int64(7), db.steps, "reading the indexes spent the statement's steps")

	var counts []int
	for range 3 {
		db := open()
		_, err := db.Exec(ctx, "CREATE TABLE x (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES x ON DELETE SET NULL, v TEXT); CREATE INDEX x_parent ON x (parent); INSERT INTO x VALUES (1, NULL, 'a'), (2, 1, 'b'), (3, 2, 'c')")
		require.NoError(t, err)
		c, err := db.Exec(ctx, "DROP TABLE x")
		require.NoError(t, err)
		for _, r := range db.rowOps {
			require.Equal(t, "x", r.table)
		}
		counts = append(counts, c.RowsWritten)
	}
	require.Equal(t, []int{counts[0], counts[0], counts[0]}, counts)
}
