package object

import (
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// SQLSnapshotPrefix starts the snapshot keys that hold an object's SQL
// database (rule Q2): Storage.Snapshot has one key per table, index, view
// and trigger, SQLSnapshotPrefix + its name, and Storage.Restore rebuilds
// the database from them. A table's value is a map with "type" "table",
// its "schema" (the CREATE statement), its "columns" and its "rows", each
// a list of values in column order, the rows sorted by value (so equal
// contents compare equal whatever order they were written in; hidden
// rowids are not kept). Others have "type" and "schema". AUTOINCREMENT
// counters are under SQLSnapshotPrefix + "sqlite_sequence" (absent when
// there is none).
//
// The snapshot a checker replays turns from (SnapshotInOrder) keeps more:
// a table with rowids lists its rows in rowid order, the order a SELECT
// without ORDER BY reads them in, with their rowids beside them under
// "rowids", and under "rowid" the name that reads them (rowid, _rowid_ or
// oid, the first no column takes). Restore puts each row back under its
// rowid, so that a restored table answers as the one taken did.
const SQLSnapshotPrefix = ReservedPrefix + "sql/"

// sqlDB returns the storage's database, opening it on first use, with
// host as its clock and seeded source.
func (s *Storage) sqlDB(host Host) *SQL {
	db := s.sql
	if db == nil {
		var err error
		if db, err = openSQL(host); err != nil {
			return &SQL{revoked: err}
		}
	}
	if s.sql != db || db.host != host || db.root != s {
		sqlAttachMu.Lock()
		db.host, db.root, s.sql = host, s, db
		sqlAttachMu.Unlock()
	}
	return db
}

// sqlAttachMu orders the attaching of a database to its storage before
// its runtime's Close reads it: after a stall, Close runs while the
// abandoned turn's goroutine may still be inside the database.
var sqlAttachMu sync.Mutex

// closeSQL frees the storage's database, if it has one.
func (s *Storage) closeSQL() {
	sqlAttachMu.Lock()
	db := s.sql
	sqlAttachMu.Unlock()
	if db != nil {
		db.close()
	}
}

func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// dump adds the database's content to snap under SQLSnapshotPrefix keys;
// inOrder keeps each table's rows in rowid order, with their rowids.
func (db *SQL) dump(snap map[string]any, inOrder bool) error {
	if db.closed {
		return nil
	}
	schema, err := db.run("SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name", nil)
	if err != nil {
		return err
	}
	for _, r := range schema.rows {
		typ, name, text := r[0].(string), r[1].(string), r[2].(string)
		if strings.HasPrefix(name, "sqlite_") {
			continue
		}
		entry := map[string]any{"type": typ, "schema": text}
		if typ == "table" && !strings.HasPrefix(strings.ToUpper(text), "CREATE VIRTUAL") {
			shape, err := db.shapeOf(name, text)
			if err != nil {
				return err
			}
			rows, rowids, err := db.tableRows(name, shape, inOrder)
			if err != nil {
				return err
			}
			entry["columns"], entry["rows"] = shape.columns(), rows
			if rowids != nil {
				entry["rowid"], entry["rowids"] = shape.rowid, rowids
			}
		}
		snap[SQLSnapshotPrefix+name] = entry
	}
	seq, err := db.run("SELECT name FROM sqlite_schema WHERE name = 'sqlite_sequence'", nil)
	if err != nil {
		return err
	}
	if len(seq.rows) == 1 {
		shape, err := db.shapeOf("sqlite_sequence", "")
		if err != nil {
			return err
		}
		rows, _, err := db.tableRows("sqlite_sequence", shape, false)
		if err != nil {
			return err
		}
		// Empty (no AUTOINCREMENT table, or none has a row yet, as after
		// DeleteAll): the same as no sequence at all.
		if len(rows) > 0 {
			snap[SQLSnapshotPrefix+"sqlite_sequence"] = map[string]any{"type": "sequence", "rows": rows}
		}
	}
	return nil
}

// tableShape is what a snapshot needs of a table's schema: its columns,
// and the name that reads its rowid ("" for a table without rowids).
type tableShape struct {
	cols  []string
	rowid string
}

// columns are the table's columns, as a snapshot lists them.
func (t tableShape) columns() []any {
	out := make([]any, len(t.cols))
	for i, c := range t.cols {
		out[i] = c
	}
	return out
}

// tableShapes caches the shapes of the tables snapshots read, by the name
// and the CREATE statement (a schema changed by ALTER is another key): a
// snapshot of an object's few tables would otherwise ask SQLite for
// them, a statement each, every time. Its size is bounded: it starts
// again when full.
var tableShapes = struct {
	sync.Mutex
	m map[[2]string]tableShape
}{m: map[[2]string]tableShape{}}

// maxTableShapes bounds tableShapes.
const maxTableShapes = 4096

// shapeOf returns the shape of table name, whose CREATE statement is
// schema ("" for SQLite's own, never cached).
func (db *SQL) shapeOf(name, schema string) (tableShape, error) {
	key := [2]string{name, schema}
	if schema != "" {
		tableShapes.Lock()
		t, ok := tableShapes.m[key]
		tableShapes.Unlock()
		if ok {
			return t, nil
		}
	}
	head, err := db.run("SELECT * FROM "+quoteIdent(name)+" LIMIT 0", nil)
	if err != nil {
		return tableShape{}, err
	}
	t := tableShape{cols: head.cols, rowid: db.rowidAlias(name, head.cols)}
	if schema != "" {
		tableShapes.Lock()
		if len(tableShapes.m) >= maxTableShapes {
			clear(tableShapes.m)
		}
		tableShapes.m[key] = t
		tableShapes.Unlock()
	}
	return t, nil
}

// tableRows reads a table's rows, sorted by value; inOrder reads them in
// rowid order instead, with their rowids (nil for a table without rowids,
// whose rows are sorted by value: a WITHOUT ROWID table reads in its
// primary key's order, however its rows were put back).
func (db *SQL) tableRows(name string, shape tableShape, inOrder bool) (rows, rowids []any, err error) {
	if len(shape.cols) == 0 {
		return []any{}, nil, nil
	}
	exprs := make([]string, len(shape.cols))
	order := make([]string, len(shape.cols))
	for i, c := range shape.cols {
		exprs[i] = quoteIdent(c) // read as stored, whatever its declared type (stepStmt)
		order[i] = fmt.Sprint(i + 1)
	}
	alias := ""
	if inOrder {
		alias = shape.rowid
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + quoteIdent(name) + " ORDER BY " + strings.Join(order, ", ")
	if alias != "" {
		q = "SELECT " + alias + ", " + strings.Join(exprs, ", ") + " FROM " + quoteIdent(name) + " ORDER BY 1"
	}
	body, err := db.run(q, nil)
	if err != nil {
		return nil, nil, err
	}
	rows = make([]any, len(body.rows))
	if alias != "" {
		rowids = make([]any, len(body.rows))
	}
	for i, r := range body.rows {
		if alias != "" {
			rowids[i], r = r[0], r[1:]
		}
		rows[i] = r
	}
	return rows, rowids, nil
}

// rowidAlias is the name that reads table name's rowid (rowid, _rowid_
// or oid, the first that no column of cols takes), or "" when the table
// has none (WITHOUT ROWID) or every name is taken.
func (db *SQL) rowidAlias(name string, cols []string) string {
	for _, a := range []string{"rowid", "_rowid_", "oid"} {
		if slices.ContainsFunc(cols, func(c string) bool { return strings.EqualFold(c, a) }) {
			continue
		}
		if _, err := db.run("SELECT "+a+" FROM "+quoteIdent(name)+" LIMIT 0", nil); err != nil {
			return "" // no rowid: WITHOUT ROWID
		}
		return a
	}
	return ""
}

// snapItem is one schema entry of a snapshot: its name and its entry.
type snapItem struct {
	name  string
	entry map[string]any
}

// load fills an empty database from the SQLSnapshotPrefix entries of snap.
func (db *SQL) load(snap map[string]any) error {
	db.pristine = false
	tables, others, seq, err := sortSnapshot(snap)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if err := db.loadTable(t); err != nil {
			return err
		}
	}
	if seq != nil {
		const key = SQLSnapshotPrefix + "sqlite_sequence"
		rows, err := list(key, "rows", seq["rows"])
		if err != nil {
			return err
		}
		for _, r := range rows {
			vals, err := list(key, "row", r)
			if err != nil {
				return err
			}
			if err := db.loadExec(key, "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", vals); err != nil {
				return err
			}
		}
	}
	// Indexes, views and triggers last: a trigger must not fire on the rows
	// restored.
	for _, o := range others {
		schema, _ := o.entry["schema"].(string)
		if err := db.loadExec(SQLSnapshotPrefix+o.name, schema, nil); err != nil {
			return err
		}
	}
	return nil
}

// sortSnapshot sorts the SQLSnapshotPrefix entries of snap, in key order,
// into tables, the other schema entries (indexes, views, triggers) and
// the sqlite_sequence entry.
func sortSnapshot(snap map[string]any) (tables, others []snapItem, seq map[string]any, err error) {
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range snap {
			if strings.HasPrefix(k, SQLSnapshotPrefix) && !yield(k) {
				return
			}
		}
	}) {
		e, ok := snap[k].(map[string]any)
		if !ok {
			return nil, nil, nil, fmt.Errorf("%q: value is %T, want a map with type and schema", k, snap[k])
		}
		name := strings.TrimPrefix(k, SQLSnapshotPrefix)
		switch e["type"] {
		case "sequence":
			seq = e
		case "table":
			tables = append(tables, snapItem{name, e})
		case "index", "view", "trigger":
			others = append(others, snapItem{name, e})
		default:
			return nil, nil, nil, fmt.Errorf("%q: type is %v, want table, index, view, trigger or sequence", k, e["type"])
		}
	}
	return tables, others, seq, nil
}

// loadTable creates table t of a snapshot and inserts its rows. A table a
// virtual table made as it was created (its shadow table: FTS5's index,
// an R-tree's nodes) exists already: it is emptied and given the rows
// taken, so that the index is the one taken.
func (db *SQL) loadTable(t snapItem) error {
	key := SQLSnapshotPrefix + t.name
	schema, _ := t.entry["schema"].(string)
	made, err := db.run("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", []driver.NamedValue{{Ordinal: 1, Value: t.name}})
	if err != nil {
		return fmt.Errorf("%q: %w", key, err)
	}
	create := schema
	if len(made.rows) > 0 {
		create = "DELETE FROM " + quoteIdent(t.name)
	}
	if err := db.loadExec(key, create, nil); err != nil {
		return err
	}
	cols, err := list(key, "columns", t.entry["columns"])
	if err != nil {
		return err
	}
	rows, err := list(key, "rows", t.entry["rows"])
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	rowids, err := list(key, "rowids", t.entry["rowids"])
	if err != nil {
		return err
	}
	if rowids != nil && len(rowids) != len(rows) {
		return fmt.Errorf("%q: %d rowids for %d rows", key, len(rowids), len(rows))
	}
	names := make([]string, 0, len(cols)+1)
	marks := make([]string, 0, len(cols)+1)
	if rowids != nil {
		alias, _ := t.entry["rowid"].(string)
		if alias != "rowid" && alias != "_rowid_" && alias != "oid" {
			return fmt.Errorf("%q: rowid is %v: want rowid, _rowid_ or oid, the column its rowids are", key, t.entry["rowid"])
		}
		names, marks = append(names, alias), append(marks, "?")
	}
	for _, c := range cols {
		names = append(names, quoteIdent(fmt.Sprint(c)))
		marks = append(marks, "?")
	}
	ins := "INSERT INTO " + quoteIdent(t.name) + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"
	for i, r := range rows {
		vals, err := list(fmt.Sprintf("%s row %d", key, i+1), "values", r)
		if err != nil {
			return err
		}
		if len(vals) != len(cols) {
			return fmt.Errorf("%q row %d: %d values for %d columns", key, i+1, len(vals), len(cols))
		}
		vals = slices.Clone(vals)
		for j, v := range vals {
			if b, ok := v.([]byte); ok && b == nil {
				// An empty blob reads as a nil []byte, which the driver
				// would bind as NULL: it goes back as the empty blob it was.
				vals[j] = []byte{}
			}
		}
		if rowids != nil {
			vals = append([]any{rowids[i]}, vals...)
		}
		if err := db.loadExec(key, ins, vals); err != nil {
			return err
		}
	}
	return nil
}

// loadExec runs q with args, a statement restoring the snapshot entry key.
func (db *SQL) loadExec(key, q string, args []any) error {
	vals, err := bindValues(args)
	if err != nil {
		return fmt.Errorf("%q: %w", key, err)
	}
	cookie := db.schemaCookie()
	if _, err := db.run(q, vals); err != nil {
		return fmt.Errorf("%q: %s: %w", key, shortSQL(q), err)
	}
	db.noteSchema(q, firstKeyword(q), cookie) // a CREATE moves the schema's history on
	return nil
}

// list reads a snapshot's list field, []any or [][]any.
func list(key, field string, v any) ([]any, error) {
	switch l := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return l, nil
	case [][]any:
		out := make([]any, len(l))
		for i, r := range l {
			out[i] = r
		}
		return out, nil
	case []string:
		out := make([]any, len(l))
		for i, r := range l {
			out[i] = r
		}
		return out, nil
	}
	return nil, fmt.Errorf("%q: %s is %T, want a list", key, field, v)
}

func isSQLKey(k string) bool { return strings.HasPrefix(k, SQLSnapshotPrefix) }

// snapshotSQL adds the SQL database of s (or of the storage s is a
// transaction of) to snap; inOrder keeps rows in rowid order, with their
// rowids; toRead adds what was dumped of the same bytes before as it was
// kept, not a copy (SnapshotToRead).
func (s *Storage) snapshotSQL(snap map[string]any, inOrder, toRead bool) {
	root := s
	for root.txn != nil {
		root = root.parent
	}
	if root.sql == nil || root.sql.conn == nil {
		return
	}
	if err := root.sql.dumpCached(snap, inOrder, toRead); err != nil {
		snap[SQLSnapshotPrefix+"error"] = err.Error()
	}
}

// restoreSQL replaces the SQL database with the one snap describes: none
// if snap has no SQLSnapshotPrefix key and there was none.
func (s *Storage) restoreSQL(snap map[string]any) error {
	has := false
	for k := range snap {
		if isSQLKey(k) {
			has = true
			break
		}
	}
	if !has && s.sql == nil {
		return nil
	}
	var host Host
	if s.sql != nil {
		host = s.sql.host
	}
	img, err := imageFor(snap)
	if err != nil {
		return err
	}
	db, err := openSQLImage(host, img.image, img.schema)
	if err != nil {
		return fmt.Errorf("%w: Restore: %w", ErrStorage, err)
	}
	s.closeSQL()
	sqlAttachMu.Lock()
	db.root, s.sql = s, db
	sqlAttachMu.Unlock()
	return nil
}
