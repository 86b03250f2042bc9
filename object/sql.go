package object

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dosim/dosim/internal/wire"
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
// Reads of time and entropy are deterministic (rule Q3): random() and
// randomblob() draw from the runtime's seeded source; CURRENT_TIMESTAMP,
// CURRENT_DATE, CURRENT_TIME, and the date functions (date, time,
// datetime, julianday, unixepoch, strftime, timediff) given 'now' (written
// in the query or bound to a ? given directly to them) or no time argument
// read the virtual clock. A 'now' that reaches a date function any other
// way (stored in a column, say) is not seen; do not do that.
//
// Transaction statements (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE),
// ATTACH, DETACH and VACUUM are refused, as on the platform: use
// Transaction.
type SQL struct {
	conn  driver.Conn
	q     driver.QueryerContext
	host  wire.Host  // the object's host: clock and seeded source; nil without a runtime
	rng   *rand.Rand // without a host: a fixed seed
	depth int        // open Transactions
	// changes is SQLite's total_changes() after the last write, to count
	// rows written.
	changes int64
	closed  bool
	// revoked, when set, refuses every operation: the handle of a stale
	// instance (rule L4).
	revoked error
	// root is the storage that owns the database: its journal, when the
	// runtime can fail a write, says whether writes need the turn's
	// savepoint (rule L7, see storage_gate.go).
	root *Storage
	// turn is set while the savepoint that holds the unconfirmed writes
	// of the current turns is open (only with a journal).
	turn bool
	// txWrote is set when an Exec inside the outermost Transaction wrote.
	txWrote bool
	// cleanup closes the database if it is collected unclosed; release
	// hands its driver back (connect).
	cleanup runtime.Cleanup
	release func()
}

// sqlSeq names the private in-memory databases.
var sqlSeq atomic.Uint64

// openSQL opens a fresh, empty database limited to maxBytes.
func openSQL(host wire.Host) (*SQL, error) {
	db := &SQL{host: host}
	conn, release, err := connect(db)
	if err != nil {
		return nil, err
	}
	db.conn = conn
	db.q = conn.(driver.QueryerContext)
	if _, err := db.run(fmt.Sprintf("PRAGMA max_page_count = %d", DefaultSQLMaxBytes/sqlPageSize), nil); err != nil {
		_ = conn.Close()
		release()
		return nil, fmt.Errorf("%w: open: %w", ErrSQL, err)
	}
	// The connection's C memory is not the Go heap's: free it when the
	// database is unreachable, if nobody closed it before.
	oc := openConn{conn: conn, release: release}
	db.cleanup = runtime.AddCleanup(db, openConn.close, oc)
	db.release = release
	return db, nil
}

// openConn is what closing a database frees: its connection, then its
// driver (connect).
type openConn struct {
	conn    driver.Conn
	release func()
}

func (c openConn) close() {
	_ = c.conn.Close()
	c.release()
}

// close frees the database; it is the runtime's to call when it closes.
func (db *SQL) close() {
	if db == nil || db.closed {
		return
	}
	db.closed = true
	db.cleanup.Stop()
	openConn{conn: db.conn, release: db.release}.close()
}

// rand is the seeded source random() and randomblob() draw from.
func (db *SQL) rand() *rand.Rand {
	if db.host != nil {
		return db.host.Rand()
	}
	if db.rng == nil {
		db.rng = rand.New(rand.NewPCG(0, 0))
	}
	return db.rng
}

// now is the virtual clock as the time literal the rewritten queries use.
func (db *SQL) now() string {
	t := time.Unix(0, 0)
	if db.host != nil {
		t = db.host.Now()
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

func (db *SQL) live(op string) error {
	switch {
	case db.revoked != nil:
		return fmt.Errorf("%w: %s: %w", ErrSQL, op, db.revoked)
	case db.closed:
		return fmt.Errorf("%w: %s: the database is closed (its runtime was closed)", ErrSQL, op)
	}
	return nil
}

// refused are the statements Exec does not run, and why.
var refused = map[string]string{
	"BEGIN":     "use SQL.Transaction",
	"COMMIT":    "use SQL.Transaction",
	"END":       "use SQL.Transaction",
	"ROLLBACK":  "use SQL.Transaction",
	"SAVEPOINT": "use SQL.Transaction",
	"RELEASE":   "use SQL.Transaction",
	"ATTACH":    "an object has one database",
	"DETACH":    "an object has one database",
	"VACUUM":    "not supported",
}

// readOnly are the first keywords of statements that write nothing.
var readOnly = map[string]bool{"SELECT": true, "VALUES": true, "EXPLAIN": true}

// Exec runs query, one statement or several separated by ;, with args
// bound to its ? marks, and returns the cursor of the last statement's
// rows. With several statements, each takes the next arguments, as many
// as it has ? marks, and they run in order; numbered (?NNN) and named
// parameters are only for a single statement. The whole Exec is atomic: if
// a statement fails, none of them has an effect (rule Q2).
//
// Arguments may be nil, bool, any integer or float type, string, []byte or
// time.Time (stored as text 'YYYY-MM-DD HH:MM:SS.SSS' UTC). An error wraps
// ErrSQL and carries SQLite's message (rule Q4).
func (db *SQL) Exec(ctx context.Context, query string, args ...any) (*Cursor, error) {
	return db.exec(ctx, "Exec", query, false, args)
}

// exec is Exec; with readOnly set, query must be one statement and the
// connection refuses writes while it runs (PRAGMA query_only).
func (db *SQL) exec(ctx context.Context, op, query string, readOnlyQuery bool, args []any) (*Cursor, error) {
	if err := db.live(op); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSQL, op, err)
	}
	stmts, err := splitSQL(query)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %w", ErrSQL, op, shortSQL(query), err)
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("%w: %s %s: no statement", ErrSQL, op, shortSQL(query))
	}
	vals, err := bindValues(args)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %w", ErrSQL, op, shortSQL(query), err)
	}
	marks, writes := 0, false
	for _, s := range stmts {
		if why, ok := refused[s.keyword]; ok {
			return nil, fmt.Errorf("%w: %s %s: %s statements are not allowed: %s", ErrSQL, op, shortSQL(query), s.keyword, why)
		}
		if s.keyword == "PRAGMA" && strings.Contains(strings.ToLower(s.text), "max_page_count") {
			return nil, fmt.Errorf("%w: %s %s: PRAGMA max_page_count is the runtime's (the size limit)", ErrSQL, op, shortSQL(query))
		}
		marks += s.marks
		writes = writes || !readOnly[s.keyword]
	}
	if len(stmts) > 1 && marks != len(vals) {
		return nil, fmt.Errorf("%w: %s %s: %d arguments for %d ? marks in %d statements", ErrSQL, op, shortSQL(query), len(vals), marks, len(stmts))
	}
	if readOnlyQuery {
		if len(stmts) > 1 {
			return nil, fmt.Errorf("%w: %s %s: %d statements, give one", ErrSQL, op, shortSQL(query), len(stmts))
		}
		writes = false
		if _, err := db.run("PRAGMA query_only = ON", nil); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSQL, op, err)
		}
		defer func() { _, _ = db.run("PRAGMA query_only = OFF", nil) }()
	}
	var by any // the turn whose unconfirmed write this is (rule L7)
	if writes && db.root != nil && db.root.onWrite != nil {
		db.root.onWrite()
	}
	if writes {
		if db.depth > 0 {
			db.txWrote = true
		} else if by, err = db.openTurn(); err != nil {
			return nil, err
		}
	}
	cur := &Cursor{}
	err = db.atomic(len(stmts) > 1, func() error {
		next := 0
		for _, s := range stmts {
			sv := vals
			if len(stmts) > 1 {
				sv = make([]driver.NamedValue, s.marks)
				for i := range sv {
					sv[i] = driver.NamedValue{Ordinal: i + 1, Value: vals[next+i].Value}
				}
				next += s.marks
			}
			for _, k := range s.nowArgs {
				if k < len(sv) {
					if str, ok := sv[k].Value.(string); ok && strings.EqualFold(str, "now") {
						sv = append([]driver.NamedValue(nil), sv...)
						sv[k].Value = db.now() // a bound 'now' given to a date function: the clock, read only then
					}
				}
			}
			c, err := db.run(s.text, sv)
			if err != nil {
				return fmt.Errorf("%w: %s: %w", ErrSQL, shortSQL(s.text), explain(err))
			}
			cur.RowsRead += len(c.rows)
			cur.cols, cur.rows = c.cols, c.rows
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if by != nil {
		db.root.j.noteSQL(by)
	}
	if writes {
		total, err := db.totalChanges()
		if err != nil {
			return nil, err
		}
		cur.RowsWritten = int(total - db.changes)
		db.changes = total
	}
	cur.i = -1
	return cur, nil
}

// totalChanges is SQLite's count of rows written since the database opened.
func (db *SQL) totalChanges() (int64, error) {
	c, err := db.run("SELECT total_changes()", nil)
	if err != nil {
		return 0, fmt.Errorf("%w: total_changes: %w", ErrSQL, err)
	}
	return c.rows[0][0].(int64), nil
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
	if _, err := db.run("SAVEPOINT "+name, nil); err != nil {
		return fmt.Errorf("%w: %w", ErrSQL, err)
	}
	db.depth++
	ok := false
	defer func() {
		db.depth--
		if !ok {
			// A statement's ON CONFLICT ROLLBACK may have ended the
			// savepoint already: then these fail, and there is nothing to undo.
			_, _ = db.run("ROLLBACK TO "+name, nil)
			_, _ = db.run("RELEASE "+name, nil)
		}
	}()
	if err := fn(); err != nil {
		return err
	}
	if _, err := db.run("RELEASE "+name, nil); err != nil {
		return fmt.Errorf("%w: commit: %w", ErrSQL, explain(err))
	}
	ok = true
	return nil
}

// Transaction runs fn atomically: its Execs take effect all together if
// fn returns nil, and none of them if fn returns an error or panics (the
// panic goes on after the rollback). The error fn returned is returned.
// tx is db itself; Transactions nest.
func (db *SQL) Transaction(ctx context.Context, fn func(ctx context.Context, tx *SQL) error) error {
	if err := db.live("Transaction"); err != nil {
		return err
	}
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
	if total, e := db.totalChanges(); e == nil {
		db.changes = total
	}
	if err == nil && by != nil && db.txWrote {
		db.root.j.noteSQL(by)
	}
	return err
}

// rawCursor is one statement's rows.
type rawCursor struct {
	cols []string
	rows [][]any
}

// run runs one statement and reads all its rows.
func (db *SQL) run(query string, args []driver.NamedValue) (rawCursor, error) {
	// The runtime's contexts are not passed to the driver: a cancellable
	// one would start a watcher goroutine per statement; statements never
	// block, and Exec checks ctx before it starts.
	rows, err := db.q.QueryContext(context.Background(), query, args)
	if err != nil {
		return rawCursor{}, err
	}
	defer rows.Close()
	out := rawCursor{cols: rows.Columns()}
	for {
		row := make([]driver.Value, len(out.cols))
		if err := rows.Next(row); err != nil {
			if err == io.EOF {
				break
			}
			return rawCursor{}, err
		}
		vals := make([]any, len(row))
		for i, v := range row {
			vals[i] = v
		}
		out.rows = append(out.rows, vals)
	}
	return out, nil
}

// bindValues converts Exec's arguments to the driver's values.
func bindValues(args []any) ([]driver.NamedValue, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := bindValue(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out, nil
}

func bindValue(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, int64, float64, string, []byte:
		return v, nil
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	case int:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint:
		if uint64(v) > 1<<63-1 {
			return nil, fmt.Errorf("uint %d does not fit SQLite's 64-bit integer", v)
		}
		return int64(v), nil
	case uint64:
		if v > 1<<63-1 {
			return nil, fmt.Errorf("uint64 %d does not fit SQLite's 64-bit integer", v)
		}
		return int64(v), nil
	case float32:
		return float64(v), nil
	case time.Time:
		return v.UTC().Format("2006-01-02 15:04:05.000"), nil
	}
	return nil, fmt.Errorf("%T cannot be bound: use nil, bool, an integer, a float, string, []byte or time.Time", a)
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
	if root.sql == nil {
		return nil, fmt.Errorf("%w: QuerySQL %s: the object has no SQL database (it never called State.SQL)", ErrSQL, shortSQL(query))
	}
	return root.sql.exec(ctx, "QuerySQL", query, true, args)
}

// dropAll drops every table, index, view and trigger (Storage.DeleteAll),
// all or none. Under the output gate it is one write of the running turn.
func (db *SQL) dropAll() error {
	if err := db.live("DeleteAll"); err != nil {
		return err
	}
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
	if total, err := db.totalChanges(); err == nil {
		db.changes = total
	}
	if by != nil {
		db.root.j.noteSQL(by)
	}
	return nil
}
