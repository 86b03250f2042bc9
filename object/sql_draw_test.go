//go:build !dosim_nosql

package object

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sqlite3 "modernc.org/sqlite/lib"
)

// Q3: only a statement whose program may draw from SQLite's generator
// takes prngMu (stmtMayDraw), and one that is said not to draws nothing:
// run with the generator just reset, so that a draw would reseed it from
// the database's source (which marks readHost), it leaves readHost unset.
// A new rowid once the largest is taken does draw, which shows the mark
// is seen.
func TestQ3_OnlyAStatementThatMayDrawLocksTheGenerator(t *testing.T) {
	const schema = `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT);
		CREATE TABLE w (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;
		CREATE TABLE big (v);
		INSERT INTO big (rowid, v) VALUES (9223372036854775807, 0);
		CREATE TABLE logged (v); CREATE TABLE log (v);
		CREATE TRIGGER note AFTER UPDATE ON logged BEGIN INSERT INTO log VALUES (new.v); END;
		INSERT INTO t VALUES (1, 'a'), (2, 'b'); INSERT INTO w VALUES ('a', 1); INSERT INTO logged VALUES (1)`
	cases := []struct {
		stmt  string
		draws bool // the program may draw
		drew  bool // this run of it does
	}{
		{"UPDATE t SET v = 'c' WHERE k = 1", false, false},
		{"DELETE FROM t WHERE k = 2", false, false},
		{"CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v TEXT)", false, false},
		{"UPDATE w SET v = v + 1 WHERE k = 'a'", false, false},
		{"UPDATE t SET v = 'e' WHERE k IN (SELECT k FROM t ORDER BY v DESC LIMIT 1)", false, false}, // an ephemeral table, a sorter
		{"INSERT OR REPLACE INTO w VALUES ('b', 2)", false, false},
		{"INSERT INTO t (v) VALUES ('d')", true, false},
		{"UPDATE logged SET v = v + 1", true, false},   // its trigger inserts
		{"INSERT INTO big (v) VALUES (1)", true, true}, // the largest rowid is taken
	}
	for _, c := range cases {
		db, err := openSQL(nil) // its schema's history known: statements are kept
		require.NoError(t, err)
		ctx := context.Background()
		_, err = db.Exec(ctx, schema)
		require.NoError(t, err)
		// The first run prepares it; the second runs the statement kept.
		_, err = db.Exec(ctx, c.stmt)
		require.NoError(t, err, c.stmt)
		p, ok := db.prepared.m[preparedKey{text: c.stmt}]
		require.True(t, ok, "kept: %s", c.stmt)
		assert.Equal(t, c.draws, p.draws, "may draw: %s", c.stmt)
		assert.Equal(t, c.draws, db.mayDraw(c.stmt, false), c.stmt)
		prngMu.Lock()
		sqlite3.Xsqlite3_randomness(db.raw.tls, 0, 0)
		prngMu.Unlock()
		db.readHost = false
		_, err = db.Exec(ctx, c.stmt)
		require.NoError(t, err, c.stmt)
		assert.Equal(t, c.drew, db.readHost, "drew: %s", c.stmt)
		db.close()
	}
}

// Q3: SQLite names a result column whose name four others have with a
// random number ("a:" and one, sqlite3ColumnsFromExprList), and keeps a
// CREATE TABLE ... AS SELECT's in the schema: the name is the same in
// every run, on a new connection or one that parsed the statement before,
// and parsing it takes nothing from the database's seeded source (the
// next random() is the one it would be without it). It read whatever
// SQLite's generator held: three runs gave three names.
func TestQ3_AColumnNamedAfterFourOthersIsNamedTheSameInEveryRun(t *testing.T) {
	const (
		sel  = "SELECT * FROM (SELECT 1 AS a, 2 AS a, 3 AS a, 4 AS a, 5 AS a, 6 AS a)"
		ctas = "CREATE TABLE t AS SELECT 1 AS a, 2 AS a, 3 AS a, 4 AS a, 5 AS a, 6 AS a"
	)
	ctx := context.Background()
	run := func(parse bool) (cols []string, table [][]any, r any) {
		db, err := openSQL(nil)
		require.NoError(t, err)
		defer db.close()
		if parse {
			c, err := db.Exec(ctx, sel)
			require.NoError(t, err)
			cols = c.Columns()
			_, err = db.Exec(ctx, ctas)
			require.NoError(t, err)
			c, err = db.Exec(ctx, "SELECT name FROM pragma_table_info('t')")
			require.NoError(t, err)
			table = c.Values()
		}
		c, err := db.Exec(ctx, "SELECT random()")
		require.NoError(t, err)
		return cols, table, c.Values()[0][0]
	}
	cols, table, r := run(true)
	require.Len(t, cols, 6)
	assert.Equal(t, []string{"a", "a:1", "a:2", "a:3", "a:4"}, cols[:5])
	require.Len(t, table, 6)
	_, _, plain := run(false)
	assert.Equal(t, plain, r, "the parse drew nothing from the database's source")
	for i := range 4 { // new connections, and ones kept with the statements parsed
		c2, t2, r2 := run(true)
		assert.Equal(t, cols, c2, "run %d", i)
		assert.Equal(t, table, t2, "run %d", i)
		assert.Equal(t, r, r2, "run %d", i)
	}
}
