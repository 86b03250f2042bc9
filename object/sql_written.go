package object

import (
	"slices"
	"strings"
	"sync"
)

// How Cursor.RowsWritten counts as the platform's rowsWritten does. The
// platform's SQLite counts a write for each table row and each index entry
// a statement inserts, and for each row it deletes (workerd's
// patches/sqlite/0001-row-counts-plain.patch); SQLite's own total_changes
// counts the rows alone. So a statement's count is what total_changes grew
// by, plus the index entries of the rows it inserted and updated, which
// SQLite's pre-update hook tells one by one (sqlRowOps): every index of
// the table for a row inserted, and for a row updated the indexes that
// hold a column the statement sets (all of them when it sets the rowid or
// a WITHOUT ROWID table's key, or when a trigger made the update), plus
// one for the AUTOINCREMENT counter of each table an insert moved. Checked
// against real workerd 1.20261117.1 by internal/platformtest's sql-writes
// case. A partial index is counted as if every row met its WHERE (the
// platform writes only the entries it admits).

// The authorizer's action codes a write is noted by: SQLite's
// SQLITE_INSERT, SQLITE_UPDATE and SQLITE_DELETE (sql_sandbox_test.go
// holds them to SQLite's), written here so that a build without SQLite
// (dosim_nosql) compiles.
const (
	sqlAuthDelete = 9
	sqlAuthInsert = 18
	sqlAuthUpdate = 23
)

// sqlWrite is what a statement writes, as the sandbox's authorizer saw it
// while the statement was prepared (the top level only, not its
// triggers): an INSERT, UPDATE or DELETE of table, and an UPDATE's
// columns. The cut keeps it with the statement's text.
type sqlWrite struct {
	kind  int32 // sqlAuthInsert, sqlAuthUpdate or sqlAuthDelete; 0 for none
	table string
	cols  []string // the columns it sets: an UPDATE's, an upsert's (ON CONFLICT DO UPDATE)
}

// note records an authorizer's action on the statement being prepared.
func (w *sqlWrite) note(action int32, table, column string) {
	switch action {
	case sqlAuthInsert, sqlAuthDelete:
		if w.kind == 0 {
			w.kind, w.table = action, table
		}
	case sqlAuthUpdate:
		if w.kind == 0 {
			w.kind, w.table = action, table
		}
		if !slices.Contains(w.cols, column) {
			w.cols = append(w.cols, column)
		}
	}
}

// tableIndexes is what counting a table's writes needs of its schema.
type tableIndexes struct {
	indexes  [][]string // each index's key columns ("" for an expression)
	rowid    []string   // the names that set the rowid (a WITHOUT ROWID table: its key)
	autoinc  bool
	withoutR bool
}

// entries is the number of index entries an update setting cols writes
// for a row: those of the indexes that hold one of them (all of them when
// cols set the rowid or the key).
func (t *tableIndexes) entries(cols []string) int {
	for _, c := range cols {
		if slices.ContainsFunc(t.rowid, func(r string) bool { return strings.EqualFold(r, c) }) {
			return len(t.indexes)
		}
	}
	n := 0
	for _, idx := range t.indexes {
		if slices.ContainsFunc(idx, func(k string) bool {
			return k == "" || slices.ContainsFunc(cols, func(c string) bool { return strings.EqualFold(c, k) })
		}) {
			n++
		}
	}
	return n
}

// sqlRowOps counts the rows a statement inserted and updated, by table and
// by whether the statement itself or a trigger wrote them, as the
// pre-update hook tells them (the table by its name's C pointer, which
// holds for the statement).
type sqlRowOps []sqlRowOp

type sqlRowOp struct {
	table   uintptr
	op      int32 // sqlAuthInsert or sqlAuthUpdate (SQLite's SQLITE_INSERT, SQLITE_UPDATE)
	trigger bool
	n       int64
}

// add counts one row.
func (o *sqlRowOps) add(table uintptr, op int32, trigger bool) {
	for i := range *o {
		if r := &(*o)[i]; r.table == table && r.op == op && r.trigger == trigger {
			r.n++
			return
		}
	}
	*o = append(*o, sqlRowOp{table: table, op: op, trigger: trigger, n: 1})
}

// indexWrites is what the statement that wrote w changed beyond its rows:
// the index entries of the rows it inserted and updated (db.rowOps), and
// the AUTOINCREMENT counters its inserts moved.
func (db *SQL) indexWrites(w sqlWrite) int64 {
	var n int64
	var moved []*tableIndexes
	for _, r := range db.rowOps {
		name, t := db.tableIndexes(r.table)
		if t == nil {
			continue
		}
		switch {
		case r.op == sqlAuthInsert:
			n += r.n * int64(len(t.indexes))
			if t.autoinc && !slices.Contains(moved, t) {
				moved = append(moved, t)
				n++ // the table's row in sqlite_sequence
			}
		case r.trigger || !strings.EqualFold(name, w.table):
			n += r.n * int64(len(t.indexes)) // which columns it set is not told
		default:
			n += r.n * int64(t.entries(w.cols))
		}
	}
	return n
}

// tableIndexes returns the name of the table whose name SQLite holds at
// the C pointer p, and what counting its writes needs (nil when that
// cannot be read). Reading it takes three statements on SQLite's pragma
// tables, as costly as a seed's own SQL, so it is read once per schema and
// kept process-wide (sqlSchemas), keyed by the schema's history (the DDL
// that built it, sqlSchema); a database whose history is unknown (a
// statement's ON CONFLICT ROLLBACK undid some of it) reads its own. The
// database keeps what it found by p until its schema may change or a
// rollback (db.tables): SQLite's table names move only then.
func (db *SQL) tableIndexes(p uintptr) (string, *tableIndexes) {
	if e, ok := db.tables[p]; ok {
		return e.name, e.t
	}
	name := sqlTableName(p)
	t, ok := sqlSchemas.get(db.schema, name)
	if !ok {
		var err error
		if t, err = db.readTableIndexes(name); err != nil {
			t = nil
		}
		sqlSchemas.put(db.schema, name, t)
	}
	if db.tables == nil {
		db.tables = map[uintptr]tableEntry{}
	}
	db.tables[p] = tableEntry{name, t}
	return name, t
}

// tableEntry is a table as a database keeps it by the C pointer to its
// name.
type tableEntry struct {
	name string
	t    *tableIndexes
}

// sqlSchema names a database's schema by the DDL statements that built
// it, in order: two databases built by the same statements have the same
// tables and indexes. Statements that fail change nothing (each statement
// is atomic); a rollback puts back the history of the savepoint it goes
// back to; known is false once a history cannot be told (a statement's ON
// CONFLICT ROLLBACK ended every savepoint).
type sqlSchema struct {
	hash  uint64
	n     int // statements hashed, so that a short history and a collision differ
	known bool
}

// emptySchema is a new database's.
var emptySchema = sqlSchema{hash: 14695981039346656037, known: true}

// then is the schema after the statement q.
func (h sqlSchema) then(q string) sqlSchema {
	for i := 0; i < len(q); i++ {
		h.hash = (h.hash ^ uint64(q[i])) * 1099511628211
	}
	h.hash = (h.hash ^ 0xff) * 1099511628211
	h.n++
	return h
}

// isDDL reports whether the statement q may change the schema.
func isDDL(q string) bool {
	switch firstKeyword(q) {
	case "CREATE", "DROP", "ALTER":
		return true
	}
	return false
}

// noteSchema records that the statement q ran: a DDL statement moves the
// schema's history on, and what was read of the old one goes. A CREATE ...
// IF NOT EXISTS that ran before, with no DROP or ALTER since, changed
// nothing and is left out: a constructor that runs again on its object's
// database (after a reset, in every replay) keeps the history it had.
func (db *SQL) noteSchema(q string) {
	if !isDDL(q) {
		return
	}
	if firstKeyword(q) == "CREATE" && ifNotExists(q) {
		h := emptySchema.then(q).hash // q's own hash
		if db.ensured[h] {
			return
		}
		if db.ensured == nil {
			db.ensured = map[uint64]bool{}
		}
		db.ensured[h] = true
	} else if firstKeyword(q) != "CREATE" {
		clear(db.ensured) // a DROP or ALTER: what was ensured may be gone
	}
	db.schema = db.schema.then(q)
	db.tables = nil
}

// ifNotExists reports whether the CREATE statement q has IF NOT EXISTS.
func ifNotExists(q string) bool {
	head := q[:min(len(q), 200)]
	return strings.Contains(strings.ToUpper(strings.Join(strings.Fields(head), " ")), " IF NOT EXISTS ")
}

// revertSchema puts back the schema's history h (a rollback to the
// savepoint opened at h).
func (db *SQL) revertSchema(h sqlSchema) {
	if db.schema.known && h != db.schema {
		db.schema, db.tables = h, nil
		clear(db.ensured) // what the rollback undid is not told: ensure again
	}
}

// sqlSchemas keeps what counting writes needs of the tables of each
// schema history met, process-wide.
var sqlSchemas schemaCache

// schemaCache is what counting writes needs of tables, by schema history
// and table: at most maxSQLSchemaTables of them, starting again when full.
type schemaCache struct {
	sync.RWMutex
	m map[schemaTable]*tableIndexes
}

type schemaTable struct {
	schema sqlSchema
	table  string
}

const maxSQLSchemaTables = 4096

func (c *schemaCache) get(h sqlSchema, table string) (*tableIndexes, bool) {
	if !h.known {
		return nil, false
	}
	c.RLock()
	defer c.RUnlock()
	t, ok := c.m[schemaTable{h, table}]
	return t, ok
}

func (c *schemaCache) put(h sqlSchema, table string, t *tableIndexes) {
	if !h.known {
		return
	}
	c.Lock()
	defer c.Unlock()
	if c.m == nil || len(c.m) >= maxSQLSchemaTables {
		c.m = make(map[schemaTable]*tableIndexes)
	}
	c.m[schemaTable{h, table}] = t
}

func (db *SQL) readTableIndexes(table string) (*tableIndexes, error) {
	arg := []any{table}
	vals, err := bindValues(arg)
	if err != nil {
		return nil, err
	}
	t := &tableIndexes{}
	head, err := db.run("SELECT wr, sql LIKE '%AUTOINCREMENT%' FROM pragma_table_list(?1) LEFT JOIN sqlite_schema ON sqlite_schema.name = pragma_table_list.name AND sqlite_schema.type = 'table' WHERE schema = 'main'", vals)
	if err != nil || len(head.rows) != 1 {
		return nil, err
	}
	t.withoutR = asInt(head.rows[0][0]) == 1
	t.autoinc = asInt(head.rows[0][1]) == 1
	cols, err := db.run("SELECT name, type, pk FROM pragma_table_info(?1) WHERE pk > 0", vals)
	if err != nil {
		return nil, err
	}
	switch {
	case t.withoutR:
		for _, r := range cols.rows {
			t.rowid = append(t.rowid, r[0].(string))
		}
	case len(cols.rows) == 1 && strings.EqualFold(cols.rows[0][1].(string), "INTEGER"):
		t.rowid = []string{cols.rows[0][0].(string), "rowid", "oid", "_rowid_"}
	default:
		t.rowid = []string{"rowid", "oid", "_rowid_"}
	}
	idx, err := db.run("SELECT il.name, il.origin, ii.name FROM pragma_index_list(?1) AS il, pragma_index_xinfo(il.name) AS ii WHERE ii.key ORDER BY il.seq, ii.seqno", vals)
	if err != nil {
		return nil, err
	}
	last := ""
	for _, r := range idx.rows {
		name, origin := r[0].(string), r[1].(string)
		if t.withoutR && origin == "pk" {
			continue // the table itself
		}
		if name != last {
			t.indexes, last = append(t.indexes, nil), name
		}
		col, _ := r[2].(string) // NULL: an expression
		t.indexes[len(t.indexes)-1] = append(t.indexes[len(t.indexes)-1], col)
	}
	return t, nil
}

// asInt is an integer SQLite returned (0 for NULL or another type).
func asInt(v any) int64 {
	n, _ := v.(int64)
	return n
}
