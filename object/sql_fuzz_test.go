//go:build !dosim_nosql

package object_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// FuzzSQLExec runs any SQL through Exec inside a method, twice on the same
// seed (rules Q3-Q5): nothing panics or hangs (a statement is bounded in
// steps), both runs give the same rows, error and database byte for byte,
// and no result carries today's date from the wall clock.
func FuzzSQLExec(f *testing.F) {
	for _, q := range []string{
		"SELECT datetime('now'), random(), randomblob(4)",
		"INSERT INTO t VALUES (1, 'x'); SELECT * FROM t",
		"INSERT INTO t (rowid, a) VALUES (9223372036854775807, 1); INSERT INTO t (a) VALUES (2); SELECT rowid FROM t",
		"SELECT date(?1), datetime('now', 'localtime')",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
		"ATTACH ':memory:' AS x",
		"PRAGMA journal_mode = OFF; INSERT INTO t VALUES (1, 2)",
		"INSERT OR ROLLBACK INTO t VALUES (1, 1)",
		"SELECT strftime('%s', 'now'), CURRENT_TIMESTAMP, julianday()",
	} {
		f.Add(q, "now")
	}
	defer object.SetSQLMaxSteps(200_000)()
	today := []string{time.Now().UTC().Format("2006-01-02"), time.Now().Format("2006-01-02")}
	f.Fuzz(func(t *testing.T, query, arg string) {
		a, b := sqlRun(query, arg), sqlRun(query, arg)
		if a != b {
			t.Fatalf("one seed, two answers to %q:\n%s\n---\n%s", query, a, b)
		}
		for _, d := range today {
			if strings.Contains(a, d) && !strings.Contains(query+arg, d) {
				t.Fatalf("%q reads the wall clock: %s", query, a)
			}
		}
	})
}

// sqlRun runs query with arg (when it has a ? mark) in a method of a fresh
// runtime, after a table t (a, b), and describes what it gave.
func sqlRun(query, arg string) string {
	rt := runtime.New(runtime.WithSeed(7))
	defer rt.Close()
	var out strings.Builder
	ns := rt.Namespace("T", func(st *object.State) object.Object {
		return fnObject{"Do": object.Func(func(ctx context.Context) error {
			db := st.SQL()
			if _, err := db.Exec(ctx, "CREATE TABLE t (a, b)"); err != nil {
				return err
			}
			c, err := db.Exec(ctx, query)
			if err != nil && strings.Contains(err.Error(), "arguments") {
				c, err = db.Exec(ctx, query, arg)
			}
			if err != nil {
				fmt.Fprintf(&out, "error %v\n", err)
				return nil
			}
			fmt.Fprintf(&out, "rows %v %v read %d written %d\n", c.Columns(), c.Values(), c.RowsRead, c.RowsWritten)
			return nil
		})}
	})
	s, err := ns.Get(ns.IDFromName("a"))
	if err != nil {
		return "get: " + err.Error()
	}
	if err := rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Do")
		return err
	}); err != nil {
		fmt.Fprintf(&out, "run: %v\n", err)
	}
	fmt.Fprintf(&out, "storage %v\n", ns.Storage(ns.IDFromName("a")).Snapshot())
	return out.String()
}
