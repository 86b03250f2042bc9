package object

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
)

// ErrSQL is wrapped by every error SQL returns: bad SQL (syntax, a
// constraint, a type), a bad argument, a full database (rule Q4). The
// message carries SQLite's own.
var ErrSQL = errors.New("sql")

// DefaultSQLMaxBytes is the size limit of an object's SQL database: a
// write that would grow it past the limit fails with an error wrapping
// ErrSQL that names the limit.
const DefaultSQLMaxBytes = 10 << 20

// sqlPageSize is SQLite's default page size, which the limit counts in.
const sqlPageSize = 4096

// SQL is an object's own embedded SQLite database (rules Q1-Q4), the
// counterpart of ctx.storage.sql on the platform. State.SQL returns it,
// creating it on first use; an object that never calls State.SQL pays
// nothing for it. It is storage, not a field: it survives resets and
// eviction, and Storage.Snapshot and Restore (hence verify and the
// explorer) see its tables.
//
// The database is pure Go (modernc.org/sqlite, no cgo) and in memory. Its
// operations never yield: no other request of the object runs during an
// Exec or a Transaction's function (unless the function itself awaits).
//
// Reads of time and entropy are deterministic (rule Q3), through SQLite's
// own hooks: random() and randomblob() draw from the runtime's seeded
// source; every 'now' (CURRENT_TIMESTAMP, CURRENT_DATE, CURRENT_TIME, a
// date function given 'now' or no time, however the 'now' reaches it)
// reads the virtual clock; 'localtime' is UTC, the platform's zone; and
// SQLite's own choice of a rowid, once the largest is taken, draws from
// the seeded source too.
//
// It is sandboxed (rule Q5): ATTACH, DETACH, transaction statements (use
// Transaction), TEMP objects, VACUUM, load_extension() and the pragmas
// that change durability, limits or the connection are refused, with the
// reason (see sql_sandbox.go for the pragmas allowed); foreign keys are
// enforced, as on the platform. A statement runs at most SQLMaxSteps
// steps, a string, blob or row is at most SQLMaxValueBytes (and the
// platform's other limits, SQLMaxStatementBytes and after), and the rows an
// Exec returns at most SQLMaxResultBytes.
type SQL struct {
	conn   driver.Conn
	host   Host       // the object's host: clock and seeded source; nil without a runtime
	rng    *rand.Rand // without a host: a fixed seed
	depth  int        // open Transactions
	closed bool
	// revoked, when set, refuses every operation: the handle of a stale
	// instance (rule L4).
	revoked error
	// root is the storage that owns the database: its journal, when the
	// runtime can fail a write, says whether writes need the turn's
	// savepoint (rule L7, see storage_gate.go).
	root *Storage
	// turn is set while the savepoint that holds the unconfirmed writes
	// of the current turns is open (only with a journal); turnEmpty, when
	// that savepoint stands for the empty database a template's query ran
	// on (sqlTemplates): losing the turn's writes takes it back to empty.
	// emptyDue: a statement's ON CONFLICT ROLLBACK ended such a savepoint,
	// and the Exec takes the database back to empty as it returns.
	turn, turnEmpty, emptyDue bool
	// ddlInTx is set once a statement changed the schema, or tried to,
	// in the open transaction (rolledBackSchema).
	ddlInTx bool
	// pristine is set while the database is new: no statement that may
	// write or set the connection ran on it (reads, dosim's dumps and
	// savepoints leave it as new); ownSchema makes it run its schema query
	// itself (a test's, to compare with a template's, sqlTemplates).
	pristine, ownSchema bool
	// readHost is set once a statement read the clock or the seeded
	// source (a template must not, sqlTemplates).
	readHost bool
	// preparing: SQLite is parsing one of the object's statements, whose
	// draws, if any, come from zeros (quietPrepare).
	preparing bool
	// txWrote is set when an Exec inside the outermost Transaction wrote.
	txWrote bool
	// cleanup closes the database if it is collected unclosed; oc is its
	// connection (connect).
	cleanup runtime.Cleanup
	oc      openConn

	// raw is the connection's SQLite handle (sql_driver.go); prepared,
	// its prepared statements (sql_prepared.go).
	raw      rawConn
	prepared *sqlPrepared
	// trusted is set while dosim runs SQL of its own, which the sandbox's
	// authorizer lets through; denied is the authorizer's reason for the
	// statement being prepared.
	trusted bool
	denied  string
	// steps counts the steps of the running statement (SQLMaxSteps);
	// stopped says why the progress handler stopped it.
	steps   int64
	stopped string
	// sets are the columns the running statement of the object's that
	// writes sets, by table, as the authorizer tells them (counting, while
	// it is prepared); tables, what counting its writes needs of each table
	// written, kept until the schema may change (sql_written.go).
	sets     sqlSets
	counting bool
	tables   map[string]*tableIndexes
	// rowOps are the rows the last statement of the object's that writes
	// inserted and updated, counted by the pre-update hook (countRows).
	rowOps sqlRowOps
	schema sqlSchema // the DDL history that built it (sql_written.go)
	// turnSchema is schema when the turn savepoint opened.
	turnSchema sqlSchema
	// rolledBack is set once a statement's ON CONFLICT ROLLBACK ended the
	// outermost Transaction: its other statements must not run outside it.
	rolledBack bool
	// mu guards running, users and closing: a database closed while a
	// statement runs, or while an Exec, a Transaction or DeleteAll is
	// under way (its runtime's watchdog gave up on the turn, and the
	// runtime closes its databases from another goroutine), closes when
	// the last of them ends, never under it (rule Q5): between statements
	// such an operation still uses the connection (SQLite's parser splits
	// the next one, the statements kept are finalized).
	mu      sync.Mutex
	running bool
	users   int // operations under way (enter)
	closing bool
}

// SQLMaxSteps bounds the steps of SQLite's virtual machine one statement
// runs (a few seconds of work): past it the statement stops with an error
// wrapping ErrSQL that names the bound, so that no query, in a method or
// a scenario's expectation, runs for ever. It is counted, not timed, so a
// statement stops at the same step on every machine.
const SQLMaxSteps = 100_000_000

// SQLMaxResultBytes bounds the rows one statement returns, counted as the
// bytes of their strings and blobs and eight for any other value.
const SQLMaxResultBytes = 32 << 20

// Why the progress handler stopped a statement.
const (
	stopSteps   = "steps"
	stopStalled = "stalled"
)

// close frees the database; it is the runtime's to call when it closes.
// While a statement runs (on a goroutine the watchdog gave up on) it only
// marks it: the statement, stopped by the progress handler, closes it as
// it ends.
func (db *SQL) close() {
	if db == nil {
		return
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closing || db.closed || db.conn == nil {
		return
	}
	db.closing = true
	if db.running || db.users > 0 {
		return
	}
	db.shut(true)
}

// shut closes the connection, or keeps it for another database
// (sqlConnPool) when pool is set; db.mu is held.
func (db *SQL) shut(pool bool) {
	db.closed = true
	db.cleanup.Stop()
	// A runtime that stalled closes its databases from another goroutine
	// than the turn's, which may still be inside one: that connection
	// serves nobody else.
	if pool && !db.halted() && connPool.put(db) {
		return
	}
	db.oc.close()
}

// halted reports whether the database's runtime stalled: its watchdog
// gave up on the turn, and a statement still running must stop.
func (db *SQL) halted() bool {
	return db.host != nil && db.host.Halted()
}

// rand is the seeded source random() and randomblob() draw from.
func (db *SQL) rand() *rand.Rand {
	db.readHost = true
	if db.host != nil {
		return db.host.Rand()
	}
	if db.rng == nil {
		db.rng = rand.New(rand.NewPCG(0, 0))
	}
	return db.rng
}

// enter starts the operation op (an Exec, a Transaction, DeleteAll, the
// end of a turn's savepoint) on the database, unless it is closed or
// revoked: until leave, a close from another goroutine only marks it
// closing (close).
func (db *SQL) enter(op string) error {
	if db.revoked != nil {
		return fmt.Errorf("%w: %s: %w", ErrSQL, op, db.revoked)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed || db.closing {
		return fmt.Errorf("%w: %s: the database is closed (its runtime was closed)", ErrSQL, op)
	}
	db.users++
	return nil
}

// leave ends an operation enter started; the last to end closes the
// database if it was closed meanwhile.
func (db *SQL) leave() {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.users--; db.users == 0 && db.closing && !db.closed && !db.running {
		db.shut(false) // the operation ran on after its runtime stalled
	}
}

// Exec runs query, one statement or several separated by ;, with args
// bound to its ? marks, and returns the cursor of the last statement's
// rows. With several statements, each takes the next arguments, as many
// as it has ? marks, and they run in order; numbered (?NNN) and named
// parameters are only for a single statement. Each statement is atomic,
// but not the Exec: when a statement fails, those before it keep their
// effect, as on the platform (a multi-statement sql.exec whose second
// statement fails keeps the first's rows, real workerd 1.20261117.1 on
// localDisk storage; rule Q2). Wrap it in Transaction to make it one.
//
// Arguments may be nil, bool, any integer or float type, string, []byte or
// time.Time (stored as text 'YYYY-MM-DD HH:MM:SS.SSS' UTC). An error wraps
// ErrSQL and carries SQLite's message (rule Q4).
func (db *SQL) Exec(ctx context.Context, query string, args ...any) (*Cursor, error) {
	return db.exec(ctx, "Exec", query, false, args)
}

// sqlStmt is one statement of an Exec, as SQLite's parser split it: its
// text and first keyword (firstKeyword), whether it writes, and its
// parameters (named: some are numbered, ?NNN, or named, :name).
type sqlStmt struct {
	text, kw string
	readonly bool
	params   int
	named    bool
	// conn: the statement may read its connection's own counts
	// (changes(), total_changes(), last_insert_rowid()), which no snapshot
	// holds (readsConnection).
	conn bool
}

// readsConnection reports whether a statement's text names a function
// that reads the connection's counts, which a database restored from its
// snapshot reads as a new connection's: such a statement's answer is not
// the state's alone (a column of that name counts too: it only costs the
// run's outcome, Hosting.ConnectionReads).
func readsConnection(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "changes") || strings.Contains(t, "last_insert_rowid")
}

// exec is Exec; with readOnlyQuery set, query must be one statement that
// does not write.
func (db *SQL) exec(ctx context.Context, op, query string, readOnlyQuery bool, args []any) (*Cursor, error) {
	if err := db.enter(op); err != nil {
		return nil, err
	}
	defer db.leave() // last: the cut and settle below use the connection
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSQL, op, err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s %s: %w", ErrSQL, op, shortSQL(query), fmt.Errorf(format, a...))
	}
	if db.rolledBack {
		return nil, bad("the transaction was rolled back (a statement's ON CONFLICT ROLLBACK): return from the Transaction's function")
	}
	if i := strings.IndexByte(query, 0); i >= 0 {
		return nil, bad("a NUL byte at offset %d: SQLite would not read past it", i)
	}
	vals, err := bindValues(args)
	if err != nil {
		return nil, bad("%v", err)
	}
	defer db.settle() // after the cut is done: it may use the connection
	cut, err := db.cut(query)
	if err != nil {
		return nil, bad("%v", err)
	}
	defer cut.done()
	first, ok, err := cut.next()
	multi := cut.multi
	switch {
	case err != nil:
		return nil, bad("%v", err)
	case !ok:
		return nil, bad("SQL code did not contain a statement.") // the platform's words
	}
	switch {
	case readOnlyQuery && multi:
		return nil, bad("more than one statement: give one")
	case readOnlyQuery && !first.readonly:
		return nil, bad("the statement writes: %s only reads (attempt to write a readonly database)", op)
	}
	if t := db.template(query, first, len(vals)); t != nil {
		return db.runTemplate(t)
	}
	// A turn's writes go in its savepoint, opened before the statements'
	// own (rule L7): for several statements, before knowing whether they
	// write.
	var by any
	if (multi || !first.readonly) && db.depth == 0 {
		if by, err = db.openTurn(); err != nil {
			return nil, err
		}
	}
	cur := &Cursor{}
	wrote := false
	err = db.atomic(false, func() error { // each statement is atomic; the Exec is not (Q2)
		var err error
		wrote, err = db.runAll(cut, first, multi, vals, cur)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrSQL) { // a statement's own error, named by its text
			return nil, err
		}
		return nil, bad("%w", err)
	}
	if wrote && by != nil {
		db.root.j.noteSQL(by)
	}
	cur.i = -1
	db.dropCache()
	return cur, nil
}

// runUser runs one statement of the object's: under the sandbox, bounded
// in steps and in result size, with SQLite's generator seeded from the
// database's source when it may draw (mayDraw), and its ON CONFLICT
// ROLLBACK caught.
func (db *SQL) runUser(s sqlStmt, args []driver.NamedValue) (rawCursor, error) {
	inTx := db.depth > 0 || db.turn
	if db.mayDraw(s.text, s.readonly) {
		defer db.lockPRNG()()
	}
	db.steps, db.stopped = 0, ""
	if !s.readonly {
		db.sets, db.counting = db.sets[:0], true
		db.countRows(true)
		defer func() {
			db.counting = false
			db.countRows(false)
		}()
	}
	c, err := db.runAs(false, s.text, args)
	if inTx && !db.inTransaction() {
		err = db.rollbackEnded(err)
	}
	switch {
	case err == nil:
		return c, nil
	case db.stopped == stopSteps:
		err = fmt.Errorf("it ran past %d steps of SQLite's virtual machine (SQLMaxSteps), and was stopped so that no statement runs for ever", SQLMaxSteps)
	case db.stopped == stopStalled:
		err = errors.New("the runtime stalled (its watchdog gave up on the turn), and the statement was stopped")
	}
	return rawCursor{}, fmt.Errorf("%w: %s: %w", ErrSQL, shortSQL(s.text), explain(err))
}

// rollbackEnded handles a statement whose ON CONFLICT ROLLBACK ended every
// savepoint open (err is its error): inside a Transaction, the rest of it
// is refused; and the writes of every turn not yet confirmed (the turn's
// savepoint, rule L7) are gone, so they are lost as a failed write's are
// and the object resets: no caller is told a write succeeded that is not
// there.
func (db *SQL) rollbackEnded(err error) error {
	// Which savepoints it undid is not told: the schema's history is lost.
	db.schema.known = false
	db.schemaMayMove()
	if db.depth > 0 {
		db.rolledBack = true
	}
	if db.turn {
		db.turn = false
		db.emptyDue, db.turnEmpty = db.turnEmpty, false
		if db.root != nil && db.root.j != nil {
			db.root.j.lostSQL()
		}
		return fmt.Errorf("%w; its ROLLBACK undid the writes of the turns not yet confirmed, so the object resets (rule L7)", err)
	}
	return err
}

// changes is SQLite's count of rows written since the database opened.
//
// It asks SQLite's C API (sqlite3_total_changes64), not a statement: each
// writing statement of an Exec asks it before and after, and a statement
// parsed on every fresh connection cost a booth seed some fifty parses.
func (db *SQL) changes() (int64, error) {
	db.mu.Lock()
	defer db.mu.Unlock() // close waits: the handle stays open for the call
	if db.closing || db.closed || db.conn == nil {
		return 0, fmt.Errorf("%w: total_changes: the database is closed (its runtime was closed)", ErrSQL)
	}
	return db.changesSoFar(), nil
}

// shortSQL quotes a query for an error message, cut after 60 bytes.
func shortSQL(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) <= 60 {
		return fmt.Sprintf("%q", q)
	}
	return fmt.Sprintf("%q...", q[:60])
}

// atomic runs fn inside a savepoint when wrap is set: all of fn's
// statements take effect, or none.
func (db *SQL) atomic(wrap bool, fn func() error) error {
	if !wrap {
		return fn()
	}
	name := fmt.Sprintf("dosim_%d", db.depth)
	schema := db.schema
	if db.depth == 0 && !db.turn {
		db.ddlInTx = false // a transaction starts
	}
	if _, err := db.run("SAVEPOINT "+name, nil); err != nil {
		return fmt.Errorf("%w: %w", ErrSQL, err)
	}
	db.depth++
	ok := false
	defer func() {
		if db.depth--; db.depth == 0 {
			db.rolledBack = false // the transaction a ROLLBACK ended is over
		}
		if !ok {
			// A statement's ON CONFLICT ROLLBACK may have ended the
			// savepoint already: then these fail, and there is nothing to undo.
			_, _ = db.run("ROLLBACK TO "+name, nil)
			_, _ = db.run("RELEASE "+name, nil)
			if !db.rolledBack {
				db.revertSchema(schema)
			}
			db.rolledBackSchema()
		}
	}()
	if err := fn(); err != nil {
		return err
	}
	if !db.inTransaction() { // a statement's ON CONFLICT ROLLBACK ended it
		ok = true
		return errRolledBack
	}
	if _, err := db.run("RELEASE "+name, nil); err != nil {
		return fmt.Errorf("%w: commit: %w", ErrSQL, explain(err))
	}
	ok = true
	return nil
}

// errRolledBack is the error of a Transaction a statement's ON CONFLICT
// ROLLBACK ended.
var errRolledBack = errors.New("a statement's ON CONFLICT ROLLBACK rolled the transaction back")

// Transaction runs fn atomically: its Execs take effect all together if
// fn returns nil, and none of them if fn returns an error or panics (the
// panic goes on after the rollback). The error fn returned is returned.
// tx is db itself; Transactions nest.
func (db *SQL) Transaction(ctx context.Context, fn func(ctx context.Context, tx *SQL) error) error {
	if err := db.enter("Transaction"); err != nil {
		return err
	}
	defer db.leave()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: Transaction: %w", ErrSQL, err)
	}
	var by any // the turn whose unconfirmed writes these are (rule L7)
	if db.depth == 0 {
		var err error
		if by, err = db.openTurn(); err != nil {
			return err
		}
		db.txWrote = false
	}
	err := db.atomic(true, func() error { return fn(ctx, db) })
	if errors.Is(err, errRolledBack) && !errors.Is(err, ErrSQL) {
		err = fmt.Errorf("%w: Transaction: %w", ErrSQL, err)
	}
	if err == nil && by != nil && db.txWrote {
		db.root.j.noteSQL(by)
	}
	db.dropCache()
	return err
}

// QuerySQL runs query, one statement that only reads, on the object's
// SQL database, with args bound to its ? marks, and returns its rows: for
// tests and for a scenario's expectations on SQL state, which look at
// the database from outside the object. The connection refuses every
// write while the query runs (SQLite's PRAGMA query_only), so a statement
// that would write fails with SQLite's "attempt to write a readonly
// database" and changes nothing. QuerySQL does not create the database:
// on an object that never called State.SQL it is an error wrapping ErrSQL.
func (s *Storage) QuerySQL(ctx context.Context, query string, args ...any) (*Cursor, error) {
	if err := s.live("QuerySQL"); err != nil {
		return nil, err
	}
	root := s
	for root.txn != nil {
		root = root.parent
	}
	if root.kv {
		return nil, fmt.Errorf("%w: QuerySQL %s: %w", ErrSQL, shortSQL(query), ErrNotSQLiteBacked)
	}
	if root.sql == nil {
		return nil, fmt.Errorf("%w: QuerySQL %s: the object has no SQL database (it never called State.SQL)", ErrSQL, shortSQL(query))
	}
	return root.sql.exec(ctx, "QuerySQL", query, true, args)
}

// dropAll drops every table, index, view and trigger (Storage.DeleteAll),
// all or none. Under the output gate it is one write of the running turn.
func (db *SQL) dropAll() error {
	if err := db.enter("DeleteAll"); err != nil {
		return err
	}
	defer db.leave()
	var by any
	if db.depth > 0 {
		db.txWrote = true
	} else {
		var err error
		if by, err = db.openTurn(); err != nil {
			return err
		}
	}
	err := db.atomic(true, func() error {
		// Rows that other tables' foreign keys name may go first: the
		// check waits for the end of the outermost transaction, when
		// every table is gone.
		if _, err := db.run("PRAGMA defer_foreign_keys = ON", nil); err != nil {
			return err
		}
		db.ddlInTx, db.pristine = true, false // the drops below change the schema
		schema, err := db.run(`SELECT type, name FROM sqlite_schema
			WHERE name NOT LIKE 'sqlite\_%' ESCAPE '\' AND type IN ('trigger', 'view', 'table')
			ORDER BY CASE type WHEN 'trigger' THEN 0 WHEN 'view' THEN 1 ELSE 2 END, name`, nil)
		if err != nil {
			return err
		}
		for _, r := range schema.rows {
			typ, name := r[0].(string), r[1].(string)
			// A table's indexes and triggers go with it.
			if _, err := db.run("DROP "+strings.ToUpper(typ)+" IF EXISTS "+quoteIdent(name), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: DeleteAll: %w", ErrSQL, err)
	}
	if db.schema.known {
		db.schema = emptySchema // no table is left
		db.schemaMayMove()
	}
	if by != nil {
		db.root.j.noteSQL(by)
	}
	return nil
}
