package object

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// sqlTemplates keeps what an object's schema statement makes of a new
// database (issue 35): the first Exec of a new database is, in nearly
// every object, its constructor's CREATE TABLE IF NOT EXISTS, and on a new
// database its result is always the same bytes. So the statement runs once
// per process, in a database of its own (buildTemplate); a new database
// that runs it again takes instead a connection kept for the schema it
// makes (sqlConnPool), with that schema read and its statements prepared,
// and the bytes the statement left (SQL.template). What the object sees is
// what the statement would have done: the same file, the same schema
// history, the same cursor counts; a turn whose writes are lost takes the
// database back to empty (SQL.toEmpty), as the rollback of the turn's
// savepoint would have. A query qualifies when each of its statements
// begins with CREATE, it leaves every table empty and no virtual table,
// returns no rows and reads neither the clock nor the seeded source.
// BenchmarkScenarioSeed (explore) is what it is for: a seat-map or booth
// seed's object and each model replay from the first state start from a
// new database.
type sqlTemplates struct {
	mu sync.RWMutex
	m  map[string]*sqlTemplate // by query; nil: the query is not a template
}

// sqlTemplate is what a query made of a new database: image, as the
// query left it, and inTurn, the same bytes as they are before the commit
// of a turn's savepoint that holds the query (sqlTemplate.forTurn).
type sqlTemplate struct {
	image, inTurn         []byte
	schema                sqlSchema
	rowsRead, rowsWritten int // the query's cursor's counts
}

// The file's change counter and the counter its version number is valid
// for, in the database header: each commit sets both to the counter
// plus one.
const (
	headerChangeCounter = 24
	headerValidFor      = 92
)

// forTurn is image as it is inside a turn's savepoint that ran the
// query: its statements committed nothing yet. The query's own commits
// (one a statement) counted the file's changes; inside the savepoint the
// turn's commit counts one for all of them, from the new file's zero.
func forTurn(image []byte) []byte {
	out := slices.Clone(image)
	clear(out[headerChangeCounter : headerChangeCounter+4])
	clear(out[headerValidFor : headerValidFor+4])
	return out
}

const (
	maxTemplates     = 64      // queries sqlTemplates remembers, starting again when full
	maxTemplateBytes = 1 << 20 // a larger image is not kept
)

var templates sqlTemplates

// get is the template of query, made on first sight; nil when it has none.
func (ts *sqlTemplates) get(query string) *sqlTemplate {
	ts.mu.RLock()
	t, ok := ts.m[query]
	ts.mu.RUnlock()
	if ok {
		return t
	}
	t = buildTemplate(query)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.m == nil || len(ts.m) >= maxTemplates {
		ts.m = make(map[string]*sqlTemplate)
	}
	ts.m[query] = t
	return t
}

// buildTemplate runs query on a new database of its own, as an object's
// Exec, and returns what it made, or nil when the query does not qualify
// (sqlTemplates) or fails: then an object's database runs it itself and
// gets its error.
func buildTemplate(query string) *sqlTemplate {
	db, err := openSQLImage(nil, nil, emptySchema)
	if err != nil {
		return nil
	}
	defer db.close()
	db.pristine = false // it runs the query itself
	c, err := db.Exec(context.Background(), query)
	if err != nil || len(c.cols) > 0 || !db.schema.known || db.schema == emptySchema || !allCreate(query) || db.readHost {
		return nil // db.readHost: it read the clock or the seeded source, which a template cannot
	}
	if empty, err := db.tablesEmpty(); err != nil || !empty {
		return nil
	}
	db.mu.Lock()
	image := slices.Clone(db.imageView())
	db.mu.Unlock()
	if len(image) < headerValidFor+4 || len(image) > maxTemplateBytes {
		return nil
	}
	return &sqlTemplate{image: image, inTurn: forTurn(image), schema: db.schema, rowsRead: c.RowsRead, rowsWritten: c.RowsWritten}
}

// allCreate reports whether every statement of query, which just ran,
// begins with CREATE: the cut it ran in (sqlCuts) says. A statement of
// another kind may have run on the template's own database, never on an
// object's.
func allCreate(query string) bool {
	sqlCuts.RLock()
	stmts, ok := sqlCuts.m[query]
	sqlCuts.RUnlock()
	return ok && len(stmts) > 0 && !slices.ContainsFunc(stmts, func(s sqlStmt) bool { return s.kw != "CREATE" })
}

// tablesEmpty reports whether no table of the database holds a row.
func (db *SQL) tablesEmpty() (bool, error) {
	c, err := db.run("SELECT name FROM sqlite_schema WHERE type = 'table'", nil)
	if err != nil {
		return false, err
	}
	for _, r := range c.rows {
		name, _ := r[0].(string)
		q := fmt.Sprintf(`SELECT 1 FROM "%s" LIMIT 1`, strings.ReplaceAll(name, `"`, `""`))
		rows, err := db.run(q, nil)
		if err != nil {
			return false, err
		}
		if len(rows.rows) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// template gives a new database, about to run query (whose first
// statement is first, with nargs arguments) outside any transaction, what
// query makes of a new database, on a connection kept for the schema it
// makes, and returns the template; nil when it cannot (then the query
// runs as any other). The database stays pristine until runTemplate has
// opened the turn's savepoint.
func (db *SQL) template(query string, first sqlStmt, nargs int) *sqlTemplate {
	if !db.pristine || db.ownSchema || db.depth > 0 || db.turn || nargs > 0 || db.trusted || first.kw != "CREATE" || db.halted() {
		return nil
	}
	t := templates.get(query)
	if t == nil {
		return nil
	}
	image := t.image
	if db.turnWanted() {
		image = t.inTurn
	}
	n, ok := openPooled(db.host, image, t.schema)
	if !ok {
		return nil // this database runs it, and its connection is kept for the next
	}
	if db.transplant(n) != nil {
		return nil
	}
	return t
}

// runTemplate finishes an Exec whose query the template t did: the
// turn's savepoint, opened now, stands for the new database the query
// ran on (the database is still pristine as it opens, so turnEmpty), and
// the write is the turn's, as the query's would have been.
func (db *SQL) runTemplate(t *sqlTemplate) (*Cursor, error) {
	by, err := db.openTurn()
	db.pristine = false
	if err != nil {
		return nil, err
	}
	if db.turnEmpty {
		// The file is t.inTurn: a write of the header in the savepoint
		// makes the turn's commit count the query's, as it would have.
		if _, err := db.run("PRAGMA user_version = 0", nil); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSQL, err)
		}
	}
	if db.root != nil {
		db.root.gen++
	}
	if db.root != nil && db.root.onWrite != nil {
		db.root.onWrite()
	}
	if by != nil {
		db.root.j.noteSQL(by)
	}
	db.dropCache()
	return &Cursor{i: -1, RowsRead: t.rowsRead, RowsWritten: t.rowsWritten}, nil
}

// toEmpty makes the database a new one again, on a new or kept
// connection: the turn whose savepoint stood for the new database
// (turnEmpty) lost its writes. Whether a template made its schema or its
// own query did, it is then what it was before that turn.
func (db *SQL) toEmpty() {
	if db.halted() {
		return // its runtime stalled: nothing runs on it again
	}
	n, err := openSQLImage(db.host, nil, emptySchema)
	if err != nil {
		return
	}
	if db.transplant(n) == nil {
		db.pristine = true
	}
}

// errTransplant: the database closed before it took another's connection.
var errTransplant = errors.New("the database is closed")

// transplant makes n's connection, with its file and schema, the
// database's, and keeps the one it had for another database
// (sqlConnPool) or closes it. n is not used again.
func (db *SQL) transplant(n *SQL) error {
	n.cleanup.Stop()
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closing || db.closed || db.running {
		n.oc.close()
		return errTransplant
	}
	db.cleanup.Stop()
	if !connPool.put(db) {
		db.oc.close()
	}
	db.use(n.oc)
	db.schema, db.tables = n.schema, nil
	return nil
}
