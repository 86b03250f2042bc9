package scenario_test

import (
	"testing"

	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sqlFile books two seats and expects the seats table's rows, with the
// expectations given.
const sqlFile = `namespaces: {SHOW: seats, SHOP: inventory}
stubs:
  box: {namespace: SHOW, object: o}
  shop: {namespace: SHOP, object: o}
calls:
  - {stub: box, method: Book, args: [b1, 1, alice]}
  - {stub: box, method: Book, args: [b2, 2, bob]}
  - {stub: shop, method: Get, args: [a]}
expect:
  sql:
`

// Q1: a scenario expects SQL state: a query and the rows it must return,
// numbers compared as numbers. A query that returns other rows, bad SQL,
// a missing table and an object that never used SQL are failed
// expectations naming SQLite's message, never a crash.
func TestQ1_ScenarioExpectsSQLRows(t *testing.T) {
	good := sqlFile + `    - {stub: box, query: "SELECT seat, holder FROM seats ORDER BY seat", rows: [[1, alice], [2, bob]]}
    - {stub: box, query: "SELECT seat * 1.5, holder FROM seats WHERE seat = ?", args: [2], rows: [[3, bob]]}
    - {stub: box, query: "SELECT holder FROM seats WHERE seat > ?", args: [5], rows: []}
`
	sc, err := scenario.Parse("s.yaml", []byte(good), builtIns)
	require.NoError(t, err)
	res, err := sc.Run()
	require.NoError(t, err)
	assert.Empty(t, res.Failures)
	assert.Equal(t, 3, res.Checked)

	bad := sqlFile + `    - {stub: box, query: "SELECT seat, holder FROM seats ORDER BY seat", rows: [[1, alice], [2, carol]]}
    - {stub: box, query: "SELEC seat FROM seats", rows: []}
    - {stub: box, query: "SELECT * FROM nope", rows: []}
    - {stub: shop, query: "SELECT 1", rows: [[1]]}
    - {stub: box, query: "DELETE FROM seats", rows: []}
`
	sc, err = scenario.Parse("s.yaml", []byte(bad), builtIns)
	require.NoError(t, err)
	res, err = sc.Run()
	require.NoError(t, err)
	require.Len(t, res.Failures, 5)
	got := make([]string, len(res.Failures))
	for i, f := range res.Failures {
		got[i] = f.String()
	}
	assert.Equal(t, []string{
		`s.yaml:11: expect.sql[0]: expected SHOW/o SQL "SELECT seat, holder FROM seats ORDER BY seat" = [[1,"alice"],[2,"carol"]], got SHOW/o SQL "SELECT seat, holder FROM seats ORDER BY seat" = [[1,"alice"],[2,"bob"]]`,
		`s.yaml:12: expect.sql[1]: expected SHOW/o SQL "SELEC seat FROM seats" = [], got SHOW/o SQL "SELEC seat FROM seats" failed: sql: QuerySQL "SELEC seat FROM seats": near "SELEC": syntax error at offset 0: SQLITE_ERROR`,
		`s.yaml:13: expect.sql[2]: expected SHOW/o SQL "SELECT * FROM nope" = [], got SHOW/o SQL "SELECT * FROM nope" failed: sql: QuerySQL "SELECT * FROM nope": no such table: nope: SQLITE_ERROR`,
		`s.yaml:14: expect.sql[3]: expected SHOP/o SQL "SELECT 1" = [[1]], got SHOP/o SQL "SELECT 1" failed: sql: QuerySQL "SELECT 1": the object has no SQL database (it never called State.SQL)`,
		`s.yaml:15: expect.sql[4]: expected SHOW/o SQL "DELETE FROM seats" = [], got SHOW/o SQL "DELETE FROM seats" failed: sql: QuerySQL "DELETE FROM seats": the statement writes: QuerySQL only reads (attempt to write a readonly database)`,
	}, got)
}
