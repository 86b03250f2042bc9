//go:build !dosim_nosql

package object

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const templSchema = "CREATE TABLE IF NOT EXISTS tt (n INTEGER PRIMARY KEY, s TEXT UNIQUE)"

// templReads are what a statement can read of a database and its
// connection: a database that took its schema from a template reads them
// as one that ran its schema query.
var templReads = append([]string{
	"SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema ORDER BY name",
	"SELECT data FROM sqlite_dbpage WHERE pgno = 1", // the header: its change counters too
}, connectionReads...)

// templated opens a new database with open and Execs query on it, which
// takes the template (sqlTemplates): a database before it ran query
// and left its connection for the next, so the new one's Exec runs no
// statement. It fails the test if the Exec did not take it.
func templated(t *testing.T, open func() *SQL, query string) (*SQL, *Cursor) {
	t.Helper()
	ctx := context.Background()
	require.NotNil(t, templates.get(query), "the query has a template")
	first, err := openSQL(nil)
	require.NoError(t, err)
	_, err = first.Exec(ctx, query)
	require.NoError(t, err)
	first.close()
	db := open()
	before := db.raw.db
	c, err := db.Exec(ctx, query)
	require.NoError(t, err)
	require.NotEqual(t, before, db.raw.db, "the Exec took a kept connection")
	return db, c
}

// plain opens a new database that runs its schema query itself.
func plain(t *testing.T, open func() *SQL) *SQL {
	t.Helper()
	db := open()
	db.ownSchema = true
	return db
}

func newDB(t *testing.T) func() *SQL {
	return func() *SQL {
		t.Helper()
		db, err := openSQL(nil)
		require.NoError(t, err)
		return db
	}
}

func reads(t *testing.T, db *SQL, extra ...string) [][][]any {
	t.Helper()
	var out [][][]any
	for _, q := range append(slices.Clone(templReads), extra...) {
		c, err := db.Exec(context.Background(), q)
		require.NoError(t, err, q)
		out = append(out, c.Values())
	}
	return out
}

// Q3: a new database that takes its schema from a template (sqlTemplates)
// is the one its schema query would have made: the same bytes, the same
// cursor counts, and the same reads of its file and connection, before
// writes and after them.
func TestQ3_ADatabaseFromATemplateIsTheOneItsSchemaMakes(t *testing.T) {
	ctx := context.Background()
	for _, query := range []string{templSchema, "CREATE TABLE tt (n INTEGER PRIMARY KEY, s TEXT UNIQUE); CREATE INDEX tts ON tt (s, n)"} {
		tdb, tc := templated(t, newDB(t), query)
		defer tdb.close()
		pdb := plain(t, newDB(t))
		defer pdb.close()
		pc, err := pdb.Exec(ctx, query)
		require.NoError(t, err)
		assert.Equal(t, [2]int{pc.RowsRead, pc.RowsWritten}, [2]int{tc.RowsRead, tc.RowsWritten}, "the cursor's counts")
		assert.Equal(t, pdb.schema, tdb.schema, "the schema's history")
		pdb.mu.Lock()
		tdb.mu.Lock()
		assert.Equal(t, pdb.imageView(), tdb.imageView(), "the bytes")
		tdb.mu.Unlock()
		pdb.mu.Unlock()
		for _, w := range []string{"", "INSERT INTO tt (s) VALUES ('a'), ('b')", "UPDATE tt SET s = s || '!' WHERE n = 1", "DELETE FROM tt WHERE n = 2"} {
			if w != "" {
				pw, err := pdb.Exec(ctx, w)
				require.NoError(t, err)
				tw, err := tdb.Exec(ctx, w)
				require.NoError(t, err)
				assert.Equal(t, pw.RowsWritten, tw.RowsWritten, w)
			}
			assert.Equal(t, reads(t, pdb, "SELECT n, s FROM tt"), reads(t, tdb, "SELECT n, s FROM tt"), "after %q", w)
		}
	}
}

// journaled is a storage whose writes are journaled, as the runtime's
// are when writes can fail (rule L7): each is the turn "turn"'s until the
// journal confirms or loses them.
func journaled() *Storage {
	s := NewStorage()
	s.j = &journal{current: func() any { return "turn" }, lost: func() {}}
	return s
}

// L7, Q2: when the first turn of a database that took its schema from a
// template loses its writes (a write failed), the database is new again,
// as the rollback of that turn's savepoint leaves one that ran its schema
// itself; the next turn makes the schema again. When they are confirmed,
// they stay.
func TestL7_ALostFirstTurnLeavesATemplatedDatabaseNew(t *testing.T) {
	ctx := context.Background()
	for _, keep := range []bool{false, true} {
		ts, ps := journaled(), journaled()
		tdb, _ := templated(t, func() *SQL { return ts.sqlDB(nil) }, templSchema)
		require.True(t, tdb.turnEmpty, "the turn's savepoint stands for the new database")
		pdb := plain(t, func() *SQL { return ps.sqlDB(nil) })
		// A snapshot reads the new database first (dosim's own reads): it
		// is as new as before, whether the dump was cached or ran.
		_ = ps.Snapshot()
		_, err := pdb.Exec(ctx, templSchema)
		require.NoError(t, err)
		for _, db := range []*SQL{tdb, pdb} {
			_, err := db.Exec(ctx, "INSERT INTO tt (s) VALUES ('a')")
			require.NoError(t, err)
		}
		for _, s := range []*Storage{ts, ps} {
			if keep {
				storageJournal{s}.Confirm()
			} else {
				s.j.lose(s)
			}
		}
		if !keep {
			assert.True(t, tdb.pristine && pdb.pristine, "new again: the next schema query may take the template")
		}
		assert.Equal(t, reads(t, pdb), reads(t, tdb), "keep %v", keep)
		for _, db := range []*SQL{tdb, pdb} {
			_, err := db.Exec(ctx, templSchema)
			require.NoError(t, err, "the next turn makes the schema again")
			_, err = db.Exec(ctx, "INSERT INTO tt (s) VALUES ('b')")
			require.NoError(t, err)
		}
		assert.Equal(t, reads(t, pdb, "SELECT n, s FROM tt"), reads(t, tdb, "SELECT n, s FROM tt"), "keep %v", keep)
		ts.closeSQL()
		ps.closeSQL()
	}
}

// L7, Q2: a statement's ON CONFLICT ROLLBACK in the first turn of a
// database that took its schema from a template ends the turn's savepoint,
// as it would have ended the one opened before the schema query: the
// database is new again, and the turn's writes are lost.
func TestL7_AnOnConflictRollbackInATemplatedFirstTurnLeavesItNew(t *testing.T) {
	ctx := context.Background()
	ts, ps := journaled(), journaled()
	lost := 0
	ts.j.lost = func() { lost++ }
	ps.j.lost = func() { lost++ }
	tdb, _ := templated(t, func() *SQL { return ts.sqlDB(nil) }, templSchema)
	defer ts.closeSQL()
	pdb := plain(t, func() *SQL { return ps.sqlDB(nil) })
	defer ps.closeSQL()
	_, err := pdb.Exec(ctx, templSchema)
	require.NoError(t, err)
	for _, db := range []*SQL{tdb, pdb} {
		_, err := db.Exec(ctx, "INSERT INTO tt (s) VALUES ('a')")
		require.NoError(t, err)
		_, err = db.Exec(ctx, "INSERT OR ROLLBACK INTO tt (s) VALUES ('a')")
		require.ErrorContains(t, err, "UNIQUE constraint failed")
	}
	assert.Equal(t, 2, lost, "both turns' writes are lost")
	assert.Equal(t, reads(t, pdb), reads(t, tdb))
	_, err = tdb.Exec(ctx, "SELECT n FROM tt")
	assert.ErrorContains(t, err, "no such table: tt", "the schema query was undone with the turn")
}

// Q3: only a query whose every statement is a CREATE that leaves no row,
// no virtual table and returns no rows has a template: any other could
// read the clock or the seeded source, or leave what a file does not
// hold.
func TestQ3_OnlyASchemaQueryHasATemplate(t *testing.T) {
	for q, want := range map[string]bool{
		"CREATE TABLE q1 (x)":                             true,
		"CREATE TABLE q2 (x); CREATE INDEX q2x ON q2 (x)": true,
		"CREATE VIEW q3 AS SELECT datetime('now') AS t":   true, // the view's text, not its rows
		"CREATE TABLE q4 (x); INSERT INTO q4 VALUES (1)":  false,
		"CREATE TABLE q5 AS SELECT random() AS x":         false,
		"CREATE TABLE q6 (x); SELECT 1":                   false,
		"CREATE VIRTUAL TABLE q7 USING fts5(x)":           false,
		"CREATE TABLE q8 (":                               false,
		"CREATE TEMP TABLE q9 (x)":                        false,
		"SELECT 1":                                        false,
		// No row, but they read the clock or the seeded source: a new
		// database would not read what the template's did.
		"CREATE TABLE q10 AS SELECT 1 AS x WHERE unixepoch('now') > 1000": false,
		"CREATE TABLE q11 AS SELECT 1 AS x WHERE random() = 42":           false,
	} {
		assert.Equal(t, want, buildTemplate(q) != nil, q)
	}
}

// Q1: a statement kept across a rollback (a Transaction that failed)
// stays kept when nothing in the transaction changed the schema, and
// counts the same rows written; after a rollback in a transaction in
// which a statement changed the schema, or tried to (SQLite keeps its mark
// of a schema change when an ALTER fails), SQLite expires every
// statement, and the database drops them too.
func TestQ1_AStatementKeptAcrossARollbackCountsItsWritesOnce(t *testing.T) {
	ctx := context.Background()
	const update = "UPDATE u SET a = a + 1"
	for _, ddl := range []string{"", "CREATE TABLE v (x)", "ALTER TABLE u ADD COLUMN c INTEGER DEFAULT 0 CHECK (c > 0)"} {
		s := journaled()
		db := s.sqlDB(nil)
		_, err := db.Exec(ctx, "CREATE TABLE u (k INTEGER PRIMARY KEY, a INTEGER, b INTEGER); CREATE INDEX ua ON u (a); INSERT INTO u VALUES (1, 1, 1), (2, 2, 2)")
		require.NoError(t, err)
		storageJournal{s}.Confirm()
		if ddl != "" { // the turn changes the schema before the Transaction, or fails to (the rows break the CHECK)
			_, _ = db.Exec(ctx, ddl)
		}
		first, err := db.Exec(ctx, update)
		require.NoError(t, err)
		err = db.Transaction(ctx, func(ctx context.Context, tx *SQL) error {
			if _, err := tx.Exec(ctx, update); err != nil {
				return err
			}
			return assert.AnError
		})
		require.ErrorIs(t, err, assert.AnError)
		_, kept := db.prepared.m[preparedKey{text: update}]
		assert.Equal(t, ddl == "", kept, "ddl %q", ddl)
		again, err := db.Exec(ctx, update)
		require.NoError(t, err)
		assert.Equal(t, first.RowsWritten, again.RowsWritten, "ddl %q", ddl)
		assert.Equal(t, 4, again.RowsWritten, "two rows and their two index entries, ddl %q", ddl)
		s.closeSQL()
	}
}

// Q3, L7: a first turn that runs its schema query alone, its writes
// confirmed, leaves the file the query's own commit would have: the same
// header, its change counters too.
func TestQ3_ATemplatedTurnOfItsSchemaAloneCommitsAsItsQuery(t *testing.T) {
	ctx := context.Background()
	ts, ps := journaled(), journaled()
	defer ts.closeSQL()
	defer ps.closeSQL()
	tdb, _ := templated(t, func() *SQL { return ts.sqlDB(nil) }, templSchema)
	pdb := plain(t, func() *SQL { return ps.sqlDB(nil) })
	_, err := pdb.Exec(ctx, templSchema)
	require.NoError(t, err)
	storageJournal{ts}.Confirm()
	storageJournal{ps}.Confirm()
	assert.Equal(t, reads(t, pdb), reads(t, tdb))
}
