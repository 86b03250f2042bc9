package object

import (
	"database/sql/driver"
	"fmt"
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
// SQLite's pre-update hook tells one by one (sqlRowOps), its triggers' and
// foreign-key actions' included: every index of the table for a row
// inserted; for a row updated, the indexes that hold a column set on that
// table, as the authorizer told them while the statement was prepared
// (sqlSets; all of them when the rowid or a WITHOUT ROWID table's key is
// set); plus one for each AUTOINCREMENT table inserted into. Checked against
// real workerd 1.20261117.1 by internal/platformtest's sql-writes case.
// Where dosim counts otherwise, docs/rules.md says ("SQL counters").

// The authorizer's action code an update is noted by: SQLite's
// SQLITE_UPDATE (sql_memory_test.go holds it to SQLite's), and its
// SQLITE_INSERT, which the pre-update hook reports, written here so that a
// build without SQLite (dosim_nosql) compiles.
const (
	sqlAuthInsert = 18
	sqlAuthUpdate = 23
)

// sqlSets are the columns a running statement sets, by table, as the
// authorizer tells them while the statement is prepared: its own UPDATE's
// or upsert's, its triggers' and its foreign-key actions'.
type sqlSets []sqlSet

type sqlSet struct {
	table string
	cols  []string
}

// note records that column of table is set.
func (s *sqlSets) note(table, column string) {
	for i := range *s {
		if e := &(*s)[i]; strings.EqualFold(e.table, table) {
			if !slices.Contains(e.cols, column) {
				e.cols = append(e.cols, column)
			}
			return
		}
	}
	*s = append(*s, sqlSet{table: table, cols: []string{column}})
}

// of returns the columns set on table, nil when none was told.
func (s sqlSets) of(table string) []string {
	for _, e := range s {
		if strings.EqualFold(e.table, table) {
			return e.cols
		}
	}
	return nil
}

// tableIndexes is what counting a table's writes needs of its schema.
type tableIndexes struct {
	// indexes are each index's key columns, "" for an expression or a
	// generated column (whose sources are not told: any update counts it)
	indexes [][]string
	rowid   []string // the names that set the rowid (a WITHOUT ROWID table: its key)
	autoinc bool
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

// sqlRowOps counts the rows a statement inserted and updated, by table,
// as the pre-update hook tells them. The table's name is copied when the
// hook first meets it: SQLite's string may be freed by the time the
// statement ends (a DROP TABLE's foreign-key actions).
type sqlRowOps []sqlRowOp

type sqlRowOp struct {
	ptr   uintptr // SQLite's name of the table, while the hook runs
	table string
	op    int32 // sqlAuthInsert or sqlAuthUpdate
	n     int64
}

// add counts one row of the table named at p (valid while the hook runs).
func (o *sqlRowOps) add(p uintptr, op int32) {
	for i := range *o {
		if r := &(*o)[i]; r.ptr == p && r.op == op {
			r.n++
			return
		}
	}
	*o = append(*o, sqlRowOp{ptr: p, table: sqlTableName(p), op: op, n: 1})
}

// indexWrites is what the statement changed beyond its rows: the index
// entries of the rows it inserted and updated (db.rowOps), and the
// AUTOINCREMENT counters of the tables it inserted into.
func (db *SQL) indexWrites() int64 {
	var n int64
	var counters []*tableIndexes
	for _, r := range db.rowOps {
		t := db.tableIndexes(r.table)
		if t == nil {
			continue
		}
		if r.op == sqlAuthInsert {
			n += r.n * int64(len(t.indexes))
			if t.autoinc && !slices.Contains(counters, t) {
				counters = append(counters, t)
				n++ // the table's row in sqlite_sequence
			}
			continue
		}
		if cols := db.sets.of(r.table); cols != nil {
			n += r.n * int64(t.entries(cols))
		} else {
			n += r.n * int64(len(t.indexes)) // which columns were set is not told
		}
	}
	return n
}

// tableIndexes returns what counting table's writes needs, nil when it
// cannot be read. Reading it takes statements on SQLite's pragma tables,
// as costly as a seed's own SQL, so it is read once per schema and kept
// process-wide (sqlSchemas), keyed by the schema's history (the DDL that
// built it, sqlSchema); a database whose history is unknown (a statement's
// ON CONFLICT ROLLBACK undid some of it) reads its own. The database keeps
// what it found until its schema may change or a rollback (db.tables). A
// read that fails is kept nowhere.
func (db *SQL) tableIndexes(table string) *tableIndexes {
	if t, ok := db.tables[table]; ok {
		return t
	}
	t, ok := sqlSchemas.get(db.schema, table)
	if !ok {
		var err error
		if t, err = db.readTableIndexes(table); err != nil {
			return nil
		}
		sqlSchemas.put(db.schema, table, t)
	}
	if db.tables == nil {
		db.tables = map[string]*tableIndexes{}
	}
	db.tables[table] = t
	return t
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

// noteSchema records that the statement q (first keyword kw) ran,
// SQLite's schema cookie having been cookie before it: a DDL statement
// that changed the schema
// (the cookie moved) moves the schema's history on, and what was read of
// the old one goes. One that changed nothing (CREATE ... IF NOT EXISTS of
// what exists, DROP ... IF EXISTS of what does not) is left out: a
// constructor that runs again on its object's database (after a reset,
// in every replay) keeps the history it had. ANALYZE, a virtual table and
// a change by any other statement make the history unknown: the
// statistics SQLite reads with the schema, and what a virtual table's
// module keeps of its own (FTS5's index structure), are not in it.
func (db *SQL) noteSchema(q, kw string, cookie int32) {
	switch {
	case kw == "ANALYZE":
	case db.schemaCookie() == cookie:
		// Nothing changed: a CREATE VIRTUAL TABLE IF NOT EXISTS too,
		// whose table was there (a virtual one made the history unknown
		// when it was made). Looking for VIRTUAL before this, in every
		// CREATE ... IF NOT EXISTS an object runs, cost a booth seed 3%.
		return
	case kw == "CREATE" && hasKeyword(q, "VIRTUAL"):
	case kw == "CREATE" || kw == "DROP" || kw == "ALTER":
		db.schema = db.schema.then(q)
		db.schemaMayMove()
		db.ddlInTx = true
		return
	}
	db.schema.known = false
	db.schemaMayMove()
	db.ddlInTx = true
}

// rolledBackSchema drops what was read of the schema, and the statements
// prepared on it, after a rollback to a savepoint of a transaction in
// which a statement changed the schema or tried to (a failed ALTER leaves
// SQLite's mark of a change as a done one does): SQLite then reads its schema
// again and expires every statement, and the statements kept are not
// prepared again behind the authorizer's back. Without such a statement
// SQLite keeps its schema and its statements, and so does the database
// (revertSchema has dropped them if the rollback undid a change).
func (db *SQL) rolledBackSchema() {
	if db.ddlInTx || !db.schema.known {
		db.schemaMayMove()
	}
}

// revertSchema puts back the schema's history h (a rollback to the
// savepoint opened at h).
func (db *SQL) revertSchema(h sqlSchema) {
	if db.schema.known && h != db.schema {
		db.schema = h
		db.schemaMayMove()
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
	// dosim's reads are not the statement's: they spend none of its steps.
	steps, stopped := db.steps, db.stopped
	defer func() { db.steps, db.stopped = steps, stopped }()
	vals, err := bindValues([]any{table})
	if err != nil {
		return nil, err
	}
	head, err := db.run("SELECT wr, sql FROM pragma_table_list(?1) LEFT JOIN sqlite_schema ON sqlite_schema.name = pragma_table_list.name AND sqlite_schema.type = 'table' WHERE schema = 'main'", vals)
	if err != nil {
		return nil, err
	}
	if len(head.rows) != 1 {
		return nil, fmt.Errorf("no table %q", table)
	}
	withoutRowid := asInt(head.rows[0][0]) == 1
	create, _ := head.rows[0][1].(string)
	t := &tableIndexes{autoinc: hasKeyword(create, "AUTOINCREMENT")}
	names, generated, err := db.tableColumns(t, vals, withoutRowid)
	if err != nil {
		return nil, err
	}
	idx, err := db.run("SELECT il.name, il.origin, ii.name FROM pragma_index_list(?1) AS il, pragma_index_xinfo(il.name) AS ii WHERE ii.key ORDER BY il.seq, ii.seqno", vals)
	if err != nil {
		return nil, err
	}
	texts, err := db.run("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?1 AND sql IS NOT NULL", vals)
	if err != nil {
		return nil, err
	}
	last := ""
	for _, r := range idx.rows {
		name, origin := r[0].(string), r[1].(string)
		if withoutRowid && origin == "pk" {
			continue // the table itself
		}
		if name != last {
			t.indexes, last = append(t.indexes, nil), name
		}
		col, _ := r[2].(string) // NULL: an expression
		switch {
		case slices.Contains(generated, col):
			col = "" // its sources are not told: any update counts it
		case col == "":
			// An expression: the columns its index's text names.
			for _, tr := range texts.rows {
				if tr[0].(string) == name {
					t.indexes[len(t.indexes)-1] = append(t.indexes[len(t.indexes)-1], namedColumns(tr[1].(string), names)...)
				}
			}
			continue
		}
		t.indexes[len(t.indexes)-1] = append(t.indexes[len(t.indexes)-1], col)
	}
	return t, nil
}

// tableColumns reads a table's columns (vals binds its name): it sets
// t.rowid, the names that set its rowid, and returns every column's name
// and the generated ones'.
func (db *SQL) tableColumns(t *tableIndexes, vals []driver.NamedValue, withoutRowid bool) (names, generated []string, err error) {
	cols, err := db.run("SELECT name, type, pk, hidden FROM pragma_table_xinfo(?1)", vals)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	for _, r := range cols.rows {
		name, typ, pk, hidden := r[0].(string), r[1].(string), asInt(r[2]), asInt(r[3])
		names = append(names, name)
		if pk > 0 {
			keys = append(keys, name)
		}
		if hidden == 2 || hidden == 3 {
			generated = append(generated, name)
		}
		if pk > 0 && !withoutRowid && strings.EqualFold(typ, "INTEGER") {
			t.rowid = append(t.rowid, name) // an INTEGER PRIMARY KEY, if it is the only key
		}
	}
	switch {
	case withoutRowid:
		t.rowid = keys
	case len(keys) != 1:
		t.rowid = nil
	}
	for _, a := range []string{"rowid", "oid", "_rowid_"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, a) }) {
			t.rowid = append(t.rowid, a) // the name reads the rowid unless a column takes it
		}
	}
	return names, generated, nil
}

// namedColumns are the columns of cols that the SQL text q names, outside
// strings and comments.
func namedColumns(q string, cols []string) []string {
	var out []string
	for _, w := range sqlWords(q) {
		for _, c := range cols {
			if strings.EqualFold(w, c) && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// hasKeyword reports whether the SQL text q has word as a keyword.
func hasKeyword(q, word string) bool {
	return slices.ContainsFunc(sqlWords(q), func(w string) bool { return strings.EqualFold(w, word) })
}

// sqlWords are the bare words of the SQL text q: not inside a string, a
// quoted name or a comment (a quoted name is left out: a column it names
// is not seen, which counts an index as untouched).
func sqlWords(q string) []string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			j := strings.IndexByte(q[i+1:], end)
			if j < 0 {
				i = len(q)
			} else {
				i += j + 1
			}
			b.WriteByte(' ')
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				i = len(q)
			} else {
				i += j
			}
			b.WriteByte(' ')
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				i = len(q)
			} else {
				i += j + 3
			}
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return strings.FieldsFunc(b.String(), func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}

// asInt is an integer SQLite returned (0 for NULL or another type).
func asInt(v any) int64 {
	n, _ := v.(int64)
	return n
}
