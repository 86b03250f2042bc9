package object

import (
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

// dump adds the database's content to snap under SQLSnapshotPrefix keys.
func (db *SQL) dump(snap map[string]any) error {
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
			cols, rows, err := db.tableRows(name)
			if err != nil {
				return err
			}
			entry["columns"], entry["rows"] = cols, rows
		}
		snap[SQLSnapshotPrefix+name] = entry
	}
	seq, err := db.run("SELECT name FROM sqlite_schema WHERE name = 'sqlite_sequence'", nil)
	if err != nil {
		return err
	}
	if len(seq.rows) == 1 {
		_, rows, err := db.tableRows("sqlite_sequence")
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

// tableRows reads a table's columns and rows, sorted by value.
func (db *SQL) tableRows(name string) ([]any, []any, error) {
	head, err := db.run("SELECT * FROM "+quoteIdent(name)+" LIMIT 0", nil)
	if err != nil {
		return nil, nil, err
	}
	cols := make([]any, len(head.cols))
	exprs := make([]string, len(head.cols))
	order := make([]string, len(head.cols))
	for i, c := range head.cols {
		cols[i] = c
		// Unary + keeps the value as stored (a declared DATETIME column
		// would read as a time.Time).
		exprs[i] = "+" + quoteIdent(c)
		order[i] = fmt.Sprint(i + 1)
	}
	if len(cols) == 0 {
		return cols, []any{}, nil
	}
	body, err := db.run("SELECT "+strings.Join(exprs, ", ")+" FROM "+quoteIdent(name)+" ORDER BY "+strings.Join(order, ", "), nil)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]any, len(body.rows))
	for i, r := range body.rows {
		rows[i] = r
	}
	return cols, rows, nil
}

// snapItem is one schema entry of a snapshot: its name and its entry.
type snapItem struct {
	name  string
	entry map[string]any
}

// load fills an empty database from the SQLSnapshotPrefix entries of snap.
func (db *SQL) load(snap map[string]any) error {
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
	total, err := db.totalChanges()
	if err != nil {
		return err
	}
	db.changes = total
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

// loadTable creates table t of a snapshot and inserts its rows.
func (db *SQL) loadTable(t snapItem) error {
	key := SQLSnapshotPrefix + t.name
	schema, _ := t.entry["schema"].(string)
	if err := db.loadExec(key, schema, nil); err != nil {
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
	names := make([]string, len(cols))
	marks := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(fmt.Sprint(c))
		marks[i] = "?"
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
	if _, err := db.run(q, vals); err != nil {
		return fmt.Errorf("%q: %s: %w", key, shortSQL(q), err)
	}
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
// transaction of) to snap.
func (s *Storage) snapshotSQL(snap map[string]any) {
	root := s
	for root.txn != nil {
		root = root.parent
	}
	if root.sql == nil || root.sql.conn == nil {
		return
	}
	if err := root.sql.dump(snap); err != nil {
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
	db, err := openSQL(host)
	if err != nil {
		return fmt.Errorf("%w: Restore: %w", ErrStorage, err)
	}
	if err := db.load(snap); err != nil {
		db.close()
		return fmt.Errorf("%w: Restore: SQL %w", ErrStorage, err)
	}
	s.closeSQL()
	sqlAttachMu.Lock()
	db.root, s.sql = s, db
	sqlAttachMu.Unlock()
	return nil
}
