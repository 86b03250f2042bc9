//go:build !dosim_nosql

package object

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Q3: a connection kept from a closed database (sqlConnPool) serves the
// next database of its schema as a new connection would: the same rows,
// and the same counts a statement reads of the connection and its file,
// before a write and after one; so what an object sees never depends on
// which database the connection served before.
func TestQ3_AKeptConnectionReadsAsANewOne(t *testing.T) {
	const schema = "CREATE TABLE t (n INTEGER PRIMARY KEY, s TEXT)"
	t.Run("after more writes", func(t *testing.T) {
		keptReadsAsNew(t, schema,
			[]string{"INSERT INTO t (s) VALUES ('first'); UPDATE t SET s = s || '!'", "INSERT INTO t (s) VALUES ('x'), ('y')", "DELETE FROM t WHERE n > 2",
				"PRAGMA defer_foreign_keys = ON"}, // no commit clears it: its pragma opens no transaction
			[]string{"INSERT INTO t (s) VALUES ('a'), ('b')"})
	})
	// The same writes, other rows: the file's change counter and size are
	// what the connection read last, and it reads the new rows all the same.
	t.Run("after as many writes", func(t *testing.T) {
		keptReadsAsNew(t, schema, []string{"INSERT INTO t (s) VALUES ('first')"}, []string{"INSERT INTO t (s) VALUES ('other')"})
	})
}

// Q3: a kept connection given no image (a new object's database, a
// replay of its first turn) reads as a new connection, and its first
// writes make the bytes a new connection's make: its pager starts from a
// new connection's counters (versionAfterReset), from which the file's
// change counter counts.
func TestQ3_AKeptConnectionOpensNoImageAsANewOne(t *testing.T) {
	exec := execer(t)
	first, err := openSQL(nil)
	require.NoError(t, err)
	exec(first, "CREATE TABLE gone (s TEXT); INSERT INTO gone VALUES ('x')")
	require.NoError(t, first.dropAll()) // pages and counters, no schema
	history, handle := first.schema, first.raw.db
	require.Equal(t, emptySchema, history)
	_, _ = connPool.take(history)
	first.close()

	kept, fresh := keptAndNew(t, nil, history)
	require.Equal(t, handle, kept.raw.db, "the kept connection serves it")
	readAlike(t, kept, fresh, append(slices.Clone(connectionReads), "PRAGMA user_version"),
		[]string{"CREATE TABLE t (n INTEGER PRIMARY KEY)", "INSERT INTO t VALUES (1)"}, true)
}

// execer runs a statement on a database and returns its rows, failing t
// on an error.
func execer(t *testing.T) func(db *SQL, q string) [][]any {
	return func(db *SQL, q string) [][]any {
		t.Helper()
		c, err := db.Exec(context.Background(), q)
		require.NoError(t, err, q)
		return c.Values()
	}
}

// keptAndNew opens image, of the schema history history, on the
// connection the pool keeps for it and on a new one, which it checks is
// no pool's; t closes both.
func keptAndNew(t *testing.T, image []byte, history sqlSchema) (kept, fresh *SQL) {
	kept, err := openSQLImage(nil, image, history)
	require.NoError(t, err)
	t.Cleanup(kept.close)
	fresh, err = openSQLImage(nil, image, sqlSchema{})
	require.NoError(t, err)
	t.Cleanup(fresh.close)
	require.Empty(t, fresh.prepared.m)
	return kept, fresh
}

// readAlike runs writes one by one on kept and on fresh, and before the
// first and after each compares what reads read on both, and with bytes
// their files' bytes.
func readAlike(t *testing.T, kept, fresh *SQL, reads, writes []string, bytes bool) {
	exec := execer(t)
	for _, write := range append([]string{""}, writes...) {
		if write != "" {
			exec(kept, write)
			exec(fresh, write)
		}
		for _, q := range reads {
			assert.Equal(t, exec(fresh, q), exec(kept, q), "%s, after %q", q, write)
		}
		if bytes {
			kept.mu.Lock()
			fresh.mu.Lock()
			assert.Equal(t, fresh.imageView(), kept.imageView(), "the file's bytes, after %q", write)
			fresh.mu.Unlock()
			kept.mu.Unlock()
		}
	}
}

// connectionReads are what a statement can read of a connection and its
// file besides rows.
var connectionReads = []string{
	"PRAGMA data_version",
	"SELECT changes(), total_changes(), last_insert_rowid()",
	"PRAGMA page_count",
	"PRAGMA freelist_count",
	"PRAGMA schema_version",
	"PRAGMA max_page_count",
	"PRAGMA defer_foreign_keys",
}

// keptReadsAsNew closes a database of schema after writes, then opens the
// image of another one, made by its own writes, on the connection kept and
// on a new one, and compares what they read.
func keptReadsAsNew(t *testing.T, schema string, writes, others []string) {
	exec := execer(t)
	first, err := openSQL(nil)
	require.NoError(t, err)
	exec(first, schema)
	for _, q := range writes {
		exec(first, q)
	}
	history := first.schema
	_, _ = connPool.take(history) // a database asks for its history: the pool keeps such connections
	first.close()

	other, err := openSQLImage(nil, nil, sqlSchema{}) // a new connection, kept by no pool
	require.NoError(t, err)
	exec(other, schema)
	for _, q := range others {
		exec(other, q)
	}
	other.mu.Lock()
	image := slices.Clone(other.imageView())
	other.mu.Unlock()
	other.close()

	kept, fresh := keptAndNew(t, image, history)
	require.NotEmpty(t, kept.prepared.m, "the kept connection serves it, with the statements the first prepared")
	// The first statement on the kept connection is PRAGMA data_version
	// itself: its count is set before any statement has read the file
	// (versionAfterReset).
	readAlike(t, kept, fresh, append(slices.Clone(connectionReads), "SELECT n, s FROM t"),
		[]string{"INSERT INTO t (s) VALUES ('c')", "DELETE FROM t WHERE n = 1"}, false)
}

// Q5: a prepared statement keeps the authorizer's decision it was
// prepared under, and dosim's own statements are kept apart from an
// object's: a text dosim ran is refused to the object all the same, by
// the cut of its Exec and by the statement it runs.
func TestQ5_APreparedStatementKeepsTheSandboxsDecision(t *testing.T) {
	db, err := openSQL(nil)
	require.NoError(t, err)
	defer db.close()
	const q = "PRAGMA max_page_count = 3000"
	_, err = db.run(q, nil)
	require.NoError(t, err, "dosim's own")
	require.Contains(t, db.prepared.m, preparedKey{text: q, trusted: true})
	_, err = db.Exec(context.Background(), q)
	assert.ErrorContains(t, err, "the size limit is the runtime's")
	_, err = db.runAs(false, q, nil)
	assert.ErrorContains(t, err, "the size limit is the runtime's", "the object's statement")
}

// Q1: a statement that writes counts the same rows written the second
// time it runs, from the statement kept, as the first: the columns an
// UPDATE sets, told as it was prepared, are kept with it.
func TestQ1_AKeptStatementCountsItsWritesAgain(t *testing.T) {
	ctx := context.Background()
	db, err := openSQL(nil)
	require.NoError(t, err)
	defer db.close()
	_, err = db.Exec(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, a INTEGER, b INTEGER); CREATE INDEX ta ON t (a); INSERT INTO t VALUES (1, 1, 1), (2, 2, 2)")
	require.NoError(t, err)
	for _, q := range []string{"UPDATE t SET a = a + 1", "UPDATE t SET b = b + 1"} {
		first, err := db.Exec(ctx, q)
		require.NoError(t, err)
		require.Contains(t, db.prepared.m, preparedKey{text: q}, "kept")
		again, err := db.Exec(ctx, q)
		require.NoError(t, err)
		assert.Equal(t, first.RowsWritten, again.RowsWritten, q)
	}
	c, err := db.Exec(ctx, "UPDATE t SET a = a + 1")
	require.NoError(t, err)
	assert.Equal(t, 4, c.RowsWritten, "two rows and the two index entries put back, as the platform counts (storage-sql-writes)")
}

// Q1: the schema's history moves with SQLite's schema cookie: a CREATE
// ... IF NOT EXISTS of what exists and a DROP ... IF EXISTS of what does
// not leave it, with the statements kept; a CREATE moves it and drops
// them; ANALYZE, whose statistics the history does not follow, makes it
// unknown (such a database's connection serves no other).
func TestQ1_TheSchemasHistoryFollowsItsCookie(t *testing.T) {
	ctx := context.Background()
	db, err := openSQL(nil)
	require.NoError(t, err)
	defer db.close()
	exec := func(q string) {
		t.Helper()
		_, err := db.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	exec("CREATE TABLE IF NOT EXISTS t (n)")
	h := db.schema
	require.NotEqual(t, emptySchema, h)
	exec("SELECT n FROM t")
	for _, q := range []string{"CREATE TABLE IF NOT EXISTS t (n)", "DROP TABLE IF EXISTS u", "CREATE INDEX IF NOT EXISTS tn ON t (n)"} {
		exec(q)
		if q == "CREATE INDEX IF NOT EXISTS tn ON t (n)" {
			assert.NotEqual(t, h, db.schema, q)
			assert.Empty(t, db.prepared.m, "dropped with the schema")
			continue
		}
		assert.Equal(t, h, db.schema, q)
		assert.Contains(t, db.prepared.m, preparedKey{text: "SELECT n FROM t"}, q)
	}
	exec("ANALYZE")
	assert.False(t, db.schema.known)
}

// haltedHost is a Host whose runtime stalled: its watchdog gave up.
type haltedHost struct{ Host }

func (haltedHost) Halted() bool { return true }

// Q5: a stalled runtime closes its databases from another goroutine than
// the turn's, which may still be inside one: their connections serve no
// other database; a database of a runtime that did not stall keeps its.
func TestQ5_AStalledRuntimesConnectionServesNoOther(t *testing.T) {
	for _, stalled := range []bool{false, true} {
		db, err := openSQL(nil)
		require.NoError(t, err)
		_, err = db.Exec(context.Background(), "CREATE TABLE t (n); SELECT n FROM t")
		require.NoError(t, err)
		_, _ = connPool.take(db.schema) // a database asks for its history
		if stalled {
			db.host = haltedHost{}
		}
		db.close()
		oc, kept := connPool.take(db.schema)
		assert.Equal(t, !stalled, kept, "stalled %v", stalled)
		if kept {
			oc.close()
		}
	}
}

// stallingHost is a Host whose runtime stalls once halted is set.
type stallingHost struct {
	Host
	halted *atomic.Bool
}

func (h stallingHost) Halted() bool { return h.halted.Load() }

// Q5: a stalled runtime closes its databases from another goroutine while
// the abandoned turn's goroutine may be between two statements of an
// Exec, where SQLite's parser splits the next one on the connection (and
// statements kept are finalized): the connection closes once the Exec
// ends, never under it. Closing it at once freed it under the splitter: a
// data race under -race between sqlite3_close_v2 and sqlite3_prepare_v2,
// and a SIGSEGV without (found by a helper's audit of unlockedConn; the
// SIGSEGV predates it).
func TestQ5_AStalledRuntimeClosesADatabaseAfterItsExec(t *testing.T) {
	for i := range 50 {
		var halted atomic.Bool
		db, err := openSQL(nil)
		require.NoError(t, err)
		db.host = stallingHost{halted: &halted}
		started := make(chan struct{})
		var errs atomic.Value
		done := make(chan struct{})
		go func() {
			defer close(done)
			for j := 0; ; j++ {
				// Each text new, so each is cut by the parser again.
				_, err := db.Exec(context.Background(), fmt.Sprintf("SELECT %d, %d; SELECT %d", i, j, j))
				if j == 2 {
					close(started)
				}
				if err != nil {
					errs.Store(err)
					return
				}
			}
		}()
		<-started
		halted.Store(true)
		db.close()
		<-done
		err, _ = errs.Load().(error)
		require.ErrorContains(t, err, "closed", "the Exec after the close is refused")
		db.mu.Lock()
		assert.True(t, db.closed, "closed once its Exec ended")
		db.mu.Unlock()
	}
}
