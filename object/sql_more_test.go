package object_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sqlNames lists the database's tables, indexes, views and triggers.
func sqlNames(t *testing.T, ctx context.Context, s *object.Storage) [][]any {
	t.Helper()
	c, err := s.QuerySQL(ctx, "SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite%' ORDER BY name")
	require.NoError(t, err)
	return c.Values()
}

// L8 (and Q2): DeleteAll empties the SQL database too, as the platform's
// deleteAll does: tables, indexes, views and triggers go, even with
// foreign keys between tables; AUTOINCREMENT starts again; inside a
// transaction it goes only if the transaction commits.
func TestL8_DeleteAllDropsTheSQLDatabase(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		db, s := st.SQL(), st.Storage()
		_, err := db.Exec(ctx, `PRAGMA foreign_keys = ON;
			CREATE TABLE parent (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT);
			CREATE TABLE child (id INTEGER PRIMARY KEY, p INTEGER NOT NULL REFERENCES parent(id));
			CREATE INDEX child_p ON child (p);
			CREATE VIEW names AS SELECT name FROM parent;
			CREATE TRIGGER log AFTER INSERT ON parent BEGIN SELECT 1; END;
			INSERT INTO parent (name) VALUES ('a'), ('b');
			INSERT INTO child (p) VALUES (1), (2)`)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, "k", 1))
		require.Len(t, sqlNames(t, ctx, s), 5)

		// A transaction that fails keeps both.
		boom := errors.New("boom")
		err = s.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
			require.NoError(t, tx.DeleteAll(ctx))
			assert.Len(t, sqlNames(t, ctx, s), 5, "not before the commit")
			return boom
		})
		require.ErrorIs(t, err, boom)
		assert.Len(t, sqlNames(t, ctx, s), 5)
		assert.Equal(t, 1, s.Len())

		// One that commits drops both.
		require.NoError(t, s.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error { return tx.DeleteAll(ctx) }))
		assert.Empty(t, sqlNames(t, ctx, s))
		assert.Equal(t, 0, s.Len())

		_, err = db.Exec(ctx, "CREATE TABLE parent (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT); INSERT INTO parent (name) VALUES ('c')")
		require.NoError(t, err)
		c, err := s.QuerySQL(ctx, "SELECT id FROM parent")
		require.NoError(t, err)
		assert.Equal(t, [][]any{{int64(1)}}, c.Values(), "AUTOINCREMENT starts again")

		require.NoError(t, s.DeleteAll(ctx))
		assert.Empty(t, sqlNames(t, ctx, s))
		for k := range s.Snapshot() {
			t.Errorf("snapshot key %q left after DeleteAll", k)
		}
		return nil
	})
}

// Q1: QuerySQL reads the object's database from outside and never
// writes: a writing statement fails with SQLite's message and changes
// nothing; several statements, and an object without a database, are
// errors.
func TestQ1_QuerySQLOnlyReads(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		s := st.Storage()
		_, err := s.QuerySQL(ctx, "SELECT 1")
		require.ErrorIs(t, err, object.ErrSQL)
		assert.Contains(t, err.Error(), "never called State.SQL")
		assert.Empty(t, s.Snapshot(), "QuerySQL made no database")

		_, err = st.SQL().Exec(ctx, "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)")
		require.NoError(t, err)
		c, err := s.QuerySQL(ctx, "SELECT v FROM t WHERE v = ?", 1)
		require.NoError(t, err)
		assert.Equal(t, [][]any{{int64(1)}}, c.Values())

		for _, q := range []string{"INSERT INTO t VALUES (2)", "DROP TABLE t", "WITH x AS (SELECT 3) INSERT INTO t SELECT * FROM x"} {
			_, err = s.QuerySQL(ctx, q)
			require.ErrorIs(t, err, object.ErrSQL, q)
			assert.Contains(t, err.Error(), "readonly", q)
		}
		_, err = s.QuerySQL(ctx, "SELECT 1; SELECT 2")
		assert.ErrorContains(t, err, "more than one statement")
		_, err = s.QuerySQL(ctx, "SELEC 1")
		assert.ErrorContains(t, err, "syntax error")

		c, err = s.QuerySQL(ctx, "SELECT count(*) FROM t")
		require.NoError(t, err)
		assert.Equal(t, [][]any{{int64(1)}}, c.Values(), "nothing written")
		_, err = st.SQL().Exec(ctx, "INSERT INTO t VALUES (5)")
		require.NoError(t, err, "Exec writes again after QuerySQL")
		return nil
	})
}

// Q1: a value reads back as SQLite stores it, whatever its column's
// declared type says: text in a DATE, DATETIME or TIMESTAMP column is the
// text stored, as the platform gives it back (the driver dosim ran
// statements through before turned it into a time.Time, and
// '2025-01-01T00:15:00.123Z' read back as "2025-01-01 00:15:00").
func TestQ1_DateColumnsReadBackTheTextStored(t *testing.T) {
	stored := []any{"2025-01-01T00:15:00.123Z", "2025-01-01", "2025-01-01 00:15:00.5", int64(1735690500), 1.5, []byte{1, 2}, nil}
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		db := st.SQL()
		_, err := db.Exec(ctx, "CREATE TABLE t (n INTEGER PRIMARY KEY, d DATETIME, e DATE, f TIMESTAMP)")
		require.NoError(t, err)
		for _, v := range stored {
			_, err := db.Exec(ctx, "INSERT INTO t (d, e, f) VALUES (?, ?, ?)", v, v, v)
			require.NoError(t, err)
		}
		c, err := db.Exec(ctx, "SELECT d, e, f FROM t ORDER BY n")
		require.NoError(t, err)
		for i, row := range c.Values() {
			assert.Equal(t, []any{stored[i], stored[i], stored[i]}, row, "row %d", i)
		}
		c, err = db.Exec(ctx, "SELECT d FROM t ORDER BY n LIMIT 1")
		require.NoError(t, err)
		var d string
		require.NoError(t, c.One(&d))
		assert.Equal(t, "2025-01-01T00:15:00.123Z", d, "scanned into a string: the text stored")
		return nil
	})
}

// Q1: a statement the connection keeps names the columns of the table as
// it is now: SELECT * after the table was made again with others.
func TestQ1_AKeptStatementNamesTheColumnsOfTheTableNow(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		db := st.SQL()
		_, err := db.Exec(ctx, "CREATE TABLE t (a, b); INSERT INTO t VALUES (1, 2)")
		require.NoError(t, err)
		c, err := db.Exec(ctx, "SELECT * FROM t")
		require.NoError(t, err)
		first := c.Columns()
		assert.Equal(t, []string{"a", "b"}, first)
		_, err = db.Exec(ctx, "DROP TABLE t; CREATE TABLE t (x, y, z); INSERT INTO t VALUES (1, 2, 3)")
		require.NoError(t, err)
		c, err = db.Exec(ctx, "SELECT * FROM t")
		require.NoError(t, err)
		assert.Equal(t, []string{"x", "y", "z"}, c.Columns())
		assert.Equal(t, [][]any{{int64(1), int64(2), int64(3)}}, c.Values())
		assert.Equal(t, []string{"a", "b"}, first, "a cursor's columns stay its own")
		return nil
	})
}

// Q4: a parameter no argument binds fails with its name and the count of
// arguments given: by name (Exec's arguments have none), or numbered past
// them; numbered ones within them bind.
func TestQ4_AParameterNoArgumentBindsSaysWhich(t *testing.T) {
	sqlDo(t, 1, func(ctx context.Context, st *object.State) error {
		db := st.SQL()
		for q, want := range map[string]string{
			"SELECT :who":  "parameter :who has a name: Exec's arguments bind by position only",
			"SELECT @x, ?": "parameter @x has a name",
			"SELECT ?3":    "parameter ?3: 2 argument(s) given (?NNN takes the NNN-th)",
		} {
			_, err := db.Exec(ctx, q, "a", "b")
			assert.ErrorIs(t, err, object.ErrSQL, q)
			assert.ErrorContains(t, err, want, q)
		}
		c, err := db.Exec(ctx, "SELECT ?2, ?1", "a", "b")
		require.NoError(t, err)
		assert.Equal(t, [][]any{{"b", "a"}}, c.Values())
		return nil
	})
}
