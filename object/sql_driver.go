//go:build !dosim_nosql

package object

import (
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unsafe"
	"weak"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The SQLite driver: the files that link modernc.org/sqlite (this one,
// sql_vfs.go, sql_memory.go, sql_image.go, sql_pool.go and sql_step.go). The build tag
// dosim_nosql leaves them out (see sql_nosql.go): make fuzz builds with
// it, because coverage-guided fuzzing instruments every linked package,
// and SQLite's transpiled C makes each execution a thousand times slower
// while no fuzz target runs SQL.
//
// Everything that keeps object SQL deterministic and sandboxed is
// SQLite's own machinery, never a rewriting of the SQL text (rules Q3,
// Q5): statements are split by SQLite's parser (sqlite3_prepare_v2 and
// its tail), an authorizer refuses what an object may not do, the clock
// and the randomness come from a VFS (sql_vfs.go), a progress handler
// bounds how long a statement runs, and sqlite3_limit how large a value
// grows.

// rawConn is a connection's SQLite handle and the C runtime state it is
// used with: what sqlite3_* calls the driver does not make need them.
type rawConn struct {
	db  uintptr // *sqlite3
	tls *libc.TLS
}

// rawOf reads the handle of a modernc.org/sqlite connection. The driver
// keeps it unexported; reflection reads it by name, and connect fails (a
// test checks it) if a new version of the driver renames it.
func rawOf(conn driver.Conn) (rawConn, error) {
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return rawConn{}, fmt.Errorf("%w: open: the SQLite connection is a %T", ErrSQL, conn)
	}
	db, tls := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if db.Kind() != reflect.Uintptr || tls.Kind() != reflect.Pointer || tls.Type().Elem() != reflect.TypeFor[libc.TLS]() {
		return rawConn{}, fmt.Errorf("%w: open: this version of modernc.org/sqlite keeps its connection's handle elsewhere", ErrSQL)
	}
	return rawConn{db: uintptr(db.Uint()), tls: (*libc.TLS)(unsafe.Pointer(tls.Pointer()))}, nil
}

// connect opens db's private in-memory database on the dosim VFS, with
// random() and randomblob() drawing from the runtime's seeded source, the
// sandbox's authorizer, progress handler and limits (rules Q3, Q5).
// Closing the connection (openConn.close) hands its driver on to the next
// database.
func connect(db *SQL) (openConn, error) {
	vfsOnce.Do(registerVFS)
	if vfsErr != nil {
		return openConn{}, fmt.Errorf("%w: open: %w", ErrSQL, vfsErr)
	}
	slot, err := takeDriver()
	if err != nil {
		return openConn{}, err
	}
	slot.db = weak.Make(db)
	prngMu.Lock() // opening draws from SQLite's generator
	opening.Store(true)
	conn, err := slot.drv.Open(fmt.Sprintf("file:dosim-%d?vfs=%s", sqlSeq.Add(1), memVFSName))
	opening.Store(false)
	prngMu.Unlock()
	if err != nil {
		slot.release()
		return openConn{}, fmt.Errorf("%w: open: %w", ErrSQL, err)
	}
	if err := slot.attach(db, conn); err != nil {
		_ = conn.Close()
		slot.release()
		return openConn{}, err
	}
	return openConn{conn: conn, release: slot.release, point: slot.point, raw: db.raw, prepared: &sqlPrepared{m: map[preparedKey]*preparedStmt{}}}, nil
}

// point makes d serve db (nil: none, while its connection waits in
// sqlConnPool).
func (d *sqlDriver) point(db *SQL) {
	if db == nil {
		d.db = weak.Pointer[SQL]{}
		return
	}
	d.db = weak.Make(db)
}

// attach readies conn, just opened for db: its handle, the authorizer,
// the progress handler and the limits.
func (d *sqlDriver) attach(db *SQL, conn driver.Conn) error {
	raw, err := rawOf(conn)
	if err != nil {
		return err
	}
	db.raw = raw
	d.tls = raw.tls
	sqlConns.Store(raw.tls, d)
	reg, ok := conn.(sqlite.AuthorizerRegisterer)
	if !ok {
		return fmt.Errorf("%w: open: the SQLite connection takes no authorizer", ErrSQL)
	}
	if err := reg.RegisterAuthorizer(d.authorize); err != nil {
		return fmt.Errorf("%w: open: authorizer: %w", ErrSQL, err)
	}
	sqlite3.Xsqlite3_progress_handler(raw.tls, raw.db, sqlProgressEvery, cFuncPointer(sqlProgress), 0)
	// The platform's SQL limits (SQLMaxValueBytes and after): a string,
	// blob or row, a statement's text, its bound parameters, a table's
	// columns and a LIKE or GLOB pattern; zeroblob(1e9) is an error, not a
	// gigabyte.
	for _, l := range sqlLimits {
		sqlite3.Xsqlite3_limit(raw.tls, raw.db, l.id, l.n)
	}
	// Foreign keys enforced, as on the platform.
	va := libc.NewVaList(int32(1), uintptr(0))
	if va == 0 {
		return fmt.Errorf("%w: open: out of memory", ErrSQL)
	}
	defer libc.Xfree(raw.tls, va)
	if rc := sqlite3.Xsqlite3_db_config(raw.tls, raw.db, sqlite3.SQLITE_DBCONFIG_ENABLE_FKEY, va); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("%w: open: foreign keys: %s", ErrSQL, libc.GoString(sqlite3.Xsqlite3_errstr(raw.tls, rc)))
	}
	unlockedConn(raw)
	return nil
}

// unlockedConn makes the connection raw one SQLite does not lock, as one
// opened with SQLITE_OPEN_NOMUTEX is ("multi-thread" mode: a connection
// used by one thread at a time), which modernc.org/sqlite's driver does
// not offer: it opens every connection with SQLITE_OPEN_FULLMUTEX. dosim
// uses a connection from one goroutine at a time already: the turn's runs
// its statements, a close from another goroutine waits for the operation
// under way to end (SQL.enter, runAs's running), images and dumps are
// read under SQL.mu, and the driver's own goroutine that interrupts a
// statement runs only for a context that can be cancelled, which dosim
// never passes. SQLite takes
// the connection's lock in every call of its API (a step, each column
// read, each bind), which was a tenth of a booth seed's run, in its
// pthread mutexes. The lock is freed at once: nothing holds it between
// calls, and sqlite3_close frees none (NOMUTEX's is none either).
func unlockedConn(raw rawConn) {
	conn := (*sqlite3.Tsqlite3)(cPtr(raw.db))
	m := conn.Fmutex
	conn.Fmutex = 0
	sqlite3.Xsqlite3_mutex_free(raw.tls, m)
}

// sqlDriver is a SQLite driver with dosim's functions registered, and the
// database they serve. modernc.org/sqlite keeps a function registered on a
// driver for the program's life, with what its closure holds, so one driver
// a database leaked every database (and its runtime) a sweep opened. The
// drivers are pooled instead: one per open database, reused once it is
// closed; and a driver holds its database weakly, so that one nobody
// closed is still collected (openSQL's cleanup then closes it).
type sqlDriver struct {
	drv sqlite.Driver
	db  weak.Pointer[SQL] // set by connect, cleared by release
	tls *libc.TLS         // the open connection's, the key of sqlConns
}

// sqlConns maps the C runtime state of each open connection to its
// driver: SQLite's callbacks (the VFS, the progress handler) are given
// that state, and find their database through it.
var sqlConns sync.Map // *libc.TLS -> *sqlDriver

// dbOf is the database whose connection runs on tls, if it is one of
// dosim's.
func dbOf(tls *libc.TLS) *SQL {
	d, ok := sqlConns.Load(tls)
	if !ok {
		return nil
	}
	return d.(*sqlDriver).db.Value()
}

// sqlDrivers is the pool of drivers whose database is closed.
var sqlDrivers struct {
	mu   sync.Mutex
	free []*sqlDriver
}

// takeDriver returns a driver from the pool, or a new one.
func takeDriver() (*sqlDriver, error) {
	sqlDrivers.mu.Lock()
	if n := len(sqlDrivers.free); n > 0 {
		d := sqlDrivers.free[n-1]
		sqlDrivers.free = sqlDrivers.free[:n-1]
		sqlDrivers.mu.Unlock()
		return d, nil
	}
	sqlDrivers.mu.Unlock()
	d := &sqlDriver{}
	if err := d.register(); err != nil {
		return nil, fmt.Errorf("%w: open: %w", ErrSQL, err)
	}
	return d, nil
}

// release returns d to the pool; its database's connection is closed.
func (d *sqlDriver) release() {
	if d.tls != nil {
		sqlConns.Delete(d.tls)
		d.tls = nil
	}
	d.db = weak.Pointer[SQL]{}
	sqlDrivers.mu.Lock()
	sqlDrivers.free = append(sqlDrivers.free, d)
	sqlDrivers.mu.Unlock()
}

// current is the database d serves.
func (d *sqlDriver) current() (*SQL, error) {
	if db := d.db.Value(); db != nil {
		return db, nil
	}
	return nil, errors.New("the database is closed")
}

// register registers random() and randomblob() on d's driver: they draw
// from the runtime's seeded source, eight bytes a draw (few draws to
// record, runtime.WithHistory), where SQLite's own would share one
// generator between every connection of the process.
func (d *sqlDriver) register() error {
	if err := d.drv.RegisterScalarFunction("random", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		db, err := d.current()
		if err != nil {
			return nil, err
		}
		return db.rand().Int64(), nil
	}); err != nil {
		return err
	}
	return d.drv.RegisterScalarFunction("randomblob", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		db, err := d.current()
		if err != nil {
			return nil, err
		}
		n, _ := args[0].(int64)
		if n < 1 {
			n = 1
		}
		if n > SQLMaxValueBytes {
			return nil, fmt.Errorf("randomblob(%d): at most %d bytes (SQLMaxValueBytes)", n, SQLMaxValueBytes)
		}
		b := make([]byte, (n+7)/8*8)
		r := db.rand()
		for i := 0; i < len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], r.Uint64())
		}
		return b[:n], nil
	})
}

// sqlMaxSteps is SQLMaxSteps, a variable for the tests that lower it.
var sqlMaxSteps int64 = SQLMaxSteps

// sqlProgressEvery is how many steps of SQLite's virtual machine run
// between two calls of the progress handler.
const sqlProgressEvery = 1000

// sqlProgress is every connection's progress handler: it stops the
// statement (SQLITE_INTERRUPT) once it has run SQLMaxSteps steps, or once
// the runtime stalled (its watchdog gave up on the turn: the statement
// must end before the connection can close, rule Q5).
func sqlProgress(tls *libc.TLS, _ uintptr) int32 {
	db := dbOf(tls)
	if db == nil {
		return 0
	}
	db.steps += sqlProgressEvery
	switch {
	case db.steps > sqlMaxSteps:
		db.stopped = stopSteps
		return 1
	case db.halted():
		db.stopped = stopStalled
		return 1
	}
	return 0
}

// cPtr is the C memory at p (SQLite's and its C runtime's, outside the Go
// heap) as a Go pointer: p's bits read as a pointer, the conversion go vet
// cannot tell from a misuse when written unsafe.Pointer(p).
func cPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// stmtMayDraw reports whether st, a statement prepared (prepareStmt), may
// draw from SQLite's generator as it runs, so that running
// it must take prngMu: its program holds an instruction that can. Of
// what an object's statement may do (the sandbox refuses VACUUM, TEMP
// objects, ATTACH and the journal's pragmas; the memory journal draws no
// checksum seed; memdb keeps a sorter's or an ephemeral table's spill in
// memory, with no file name to draw), SQLite draws for a new rowid once
// the largest is taken (OP_NewRowid), and in the statements a trigger or
// a virtual table's module runs (OP_Program, OP_VUpdate, OP_VCreate,
// OP_VDestroy). random() and randomblob() are dosim's own, drawing from
// the database's source; a parse's draws are quietPrepare's. An UPDATE or
// DELETE without triggers, or a CREATE ... IF NOT EXISTS of what exists,
// needs no lock: holding prngMu for every statement that writes
// serialised a booth sweep's two workers (two workers took 0.82 of one's
// wall time). A statement whose program cannot be read (another version
// of SQLite's structures) may draw.
func stmtMayDraw(st cStmt) bool {
	if st.p == 0 {
		return false
	}
	vdbe := (*sqlite3.TVdbe)(cPtr(st.p))
	if vdbe.FnOp <= 0 || vdbe.FaOp == 0 {
		return true
	}
	for _, op := range unsafe.Slice((*sqlite3.TVdbeOp)(cPtr(vdbe.FaOp)), vdbe.FnOp) {
		switch op.Fopcode {
		case sqlite3.OP_NewRowid, sqlite3.OP_Program, sqlite3.OP_VUpdate, sqlite3.OP_VCreate, sqlite3.OP_VDestroy, sqlite3.OP_Vacuum:
			return true
		}
	}
	return false
}

// cFuncPointer is f as SQLite's transpiled C calls a function pointer.
func cFuncPointer[T any](f T) uintptr {
	return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f}))
}

// sqlSplitter cuts a query into its statements with SQLite's own parser
// (sqlite3_prepare_v2 and its tail), one at a time: a statement is
// prepared only once those before it ran, as it may name a table they
// made. The sandbox's authorizer decides on each as it is prepared.
type sqlSplitter struct {
	db    *SQL
	query string
	buf   uintptr // query, as C text
	ptrs  uintptr // a *sqlite3_stmt, then the tail
	at    uintptr // where the next statement starts
}

// split starts cutting query; the caller calls free when done.
func (db *SQL) split(query string) (*sqlSplitter, error) {
	buf, err := libc.CString(query)
	if err != nil {
		return nil, err
	}
	ptrs := libc.Xmalloc(db.raw.tls, 16)
	if ptrs == 0 {
		libc.Xfree(db.raw.tls, buf)
		return nil, errors.New("out of memory")
	}
	return &sqlSplitter{db: db, query: query, buf: buf, ptrs: ptrs, at: buf}, nil
}

func (sp *sqlSplitter) free() {
	libc.Xfree(sp.db.raw.tls, sp.buf)
	libc.Xfree(sp.db.raw.tls, sp.ptrs)
}

// prepare prepares the statement at sp.at, and returns it (0 when only
// space and comments are left) with where the next one starts.
func (sp *sqlSplitter) prepare() (stmt, tail uintptr, err error) {
	left := int32(len(sp.query) - int(sp.at-sp.buf))
	if left <= 0 {
		return 0, sp.at, nil
	}
	db, tls := sp.db, sp.db.raw.tls
	db.denied = ""
	pStmt, pTail := sp.ptrs, sp.ptrs+8
	var rc int32
	prngMu.Lock()
	db.quietPrepare(func() { rc = sqlite3.Xsqlite3_prepare_v2(tls, db.raw.db, sp.at, left, pStmt, pTail) })
	prngMu.Unlock()
	if rc != sqlite3.SQLITE_OK {
		return 0, 0, db.prepareError(rc)
	}
	return *(*uintptr)(cPtr(pStmt)), *(*uintptr)(cPtr(pTail)), nil
}

// next describes the next statement: its text, whether it writes, its
// parameters; ok is false when there is none left.
func (sp *sqlSplitter) next() (s sqlStmt, ok bool, err error) {
	stmt, tail, err := sp.prepare()
	if err != nil || stmt == 0 {
		return sqlStmt{}, false, err
	}
	tls := sp.db.raw.tls
	defer sqlite3.Xsqlite3_finalize(tls, stmt)
	s = sqlStmt{text: sp.query[sp.at-sp.buf : tail-sp.buf], readonly: sqlite3.Xsqlite3_stmt_readonly(tls, stmt) != 0}
	s.conn = readsConnection(s.text)
	s.kw = firstKeyword(s.text)
	s.params = int(sqlite3.Xsqlite3_bind_parameter_count(tls, stmt))
	for i := int32(1); i <= int32(s.params); i++ {
		if sqlite3.Xsqlite3_bind_parameter_name(tls, stmt, i) != 0 {
			s.named = true // ?NNN, :name, @name or $name
		}
	}
	sp.at = tail
	return s, true, nil
}

// more reports whether a statement follows: what is left prepares to one,
// or fails to prepare (it may name a table the one before makes).
func (sp *sqlSplitter) more() bool {
	stmt, _, err := sp.prepare()
	if stmt != 0 {
		sqlite3.Xsqlite3_finalize(sp.db.raw.tls, stmt)
	}
	sp.db.denied = ""
	return err != nil || stmt != 0
}

// sqlPreUpdate is SQLite's pre-update hook of a dosim connection while
// one of the object's statements that write runs (SQL.countRows): it
// counts the rows inserted and updated (sqlRowOps), for RowsWritten.
func sqlPreUpdate(tls *libc.TLS, _, _ uintptr, op int32, _, table uintptr, _, _ int64) {
	if op != sqlite3.SQLITE_INSERT && op != sqlite3.SQLITE_UPDATE {
		return
	}
	if db := dbOf(tls); db != nil {
		db.rowOps.add(table, op)
	}
}

// countRows sets the pre-update hook (on) or takes it off: SQLite calls it
// for every row written, dosim's own restores too, so it is on only while
// a statement of the object's that writes runs.
func (db *SQL) countRows(on bool) {
	fn := uintptr(0)
	if on {
		db.rowOps = db.rowOps[:0]
		fn = cFuncPointer(sqlPreUpdateFn)
	}
	db.mu.Lock()
	defer db.mu.Unlock() // the handle stays open for the call
	if db.closing || db.closed || db.conn == nil {
		return // closed under the statement (its runtime stalled): no hook to set
	}
	sqlite3.Xsqlite3_preupdate_hook(db.raw.tls, db.raw.db, fn, 0)
}

// sqlPreUpdateFn keeps the hook in a variable: SQLite holds its C pointer.
var sqlPreUpdateFn = sqlPreUpdate

// sqlTableName is the table name SQLite's C string at p holds.
func sqlTableName(p uintptr) string { return libc.GoString(p) }

// changesSoFar is sqlite3_total_changes64: the rows the connection's
// statements have changed since it opened. db.mu is held.
func (db *SQL) changesSoFar() int64 {
	return int64(sqlite3.Xsqlite3_total_changes64(db.raw.tls, db.raw.db))
}

// prepareError is a failed prepare's error: the sandbox's reason when the
// authorizer refused, else SQLite's message.
func (db *SQL) prepareError(rc int32) error {
	if why := db.denied; why != "" {
		db.denied = "" // the reason is this statement's: taken, not left for the next
		return errors.New(why)
	}
	msg := libc.GoString(sqlite3.Xsqlite3_errmsg(db.raw.tls, db.raw.db))
	if msg == "" {
		msg = libc.GoString(sqlite3.Xsqlite3_errstr(db.raw.tls, rc))
	}
	// Where in the statement, as the platform says it ("near \"SELEC\":
	// syntax error at offset 0").
	if off := sqlite3.Xsqlite3_error_offset(db.raw.tls, db.raw.db); off >= 0 {
		msg += fmt.Sprintf(" at offset %d", off)
	}
	return errors.New(platformSQLMessage(msg, int(sqlite3.Xsqlite3_extended_errcode(db.raw.tls, db.raw.db))))
}

// inTransaction reports whether a transaction (a savepoint of dosim's) is
// open: a statement's ON CONFLICT ROLLBACK ends them all.
func (db *SQL) inTransaction() bool {
	return sqlite3.Xsqlite3_get_autocommit(db.raw.tls, db.raw.db) == 0
}

// explain words an error of modernc.org/sqlite's driver (opening a
// connection) as the platform does: see sqlMessage. The error still wraps
// the driver's.
func explain(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	// The driver's message is "errstr: errmsg (code)" (or "errstr
	// (code)"); the platform's is errmsg and the code's names.
	msg := strings.TrimSuffix(se.Error(), fmt.Sprintf(" (%d)", se.Code()))
	if generic, ok := sqlErrstr[se.Code()&0xff]; ok {
		msg = strings.TrimPrefix(msg, generic+": ")
	}
	return &sqliteError{msg: sqlMessage(msg, se.Code()), err: err}
}

// sqlMessage words SQLite's message msg of result code code as the
// platform does ("no such table: t: SQLITE_ERROR": the message and the
// code's names), and says which of dosim's limits an error that needs it
// met.
func sqlMessage(msg string, code int) string {
	msg = platformSQLMessage(msg, code)
	switch {
	case code&0xff == sqlite3.SQLITE_FULL:
		msg += fmt.Sprintf(" (the database is limited to %d bytes, DefaultSQLMaxBytes)", DefaultSQLMaxBytes)
	case code&0xff == sqlite3.SQLITE_TOOBIG && strings.Contains(msg, "string or blob"):
		msg += fmt.Sprintf(" (a string, blob or row is limited to %d bytes, SQLMaxValueBytes)", SQLMaxValueBytes)
	}
	return msg
}

// sqlErrstr is sqlite3_errstr of each primary result code, the prefix
// the driver puts before SQLite's message.
var sqlErrstr = func() map[int]string {
	tls := libc.NewTLS()
	defer tls.Close()
	m := map[int]string{}
	for c := range sqlCodeNames {
		if c > 0 {
			m[c] = libc.GoString(sqlite3.Xsqlite3_errstr(tls, int32(c)))
		}
	}
	return m
}()

// sqlLimits are the sqlite3_limit settings of every connection: the
// platform's SQL limits.
var sqlLimits = []struct{ id, n int32 }{
	{sqlite3.SQLITE_LIMIT_LENGTH, SQLMaxValueBytes},
	{sqlite3.SQLITE_LIMIT_SQL_LENGTH, SQLMaxStatementBytes},
	{sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, SQLMaxParams},
	{sqlite3.SQLITE_LIMIT_COLUMN, SQLMaxColumns},
	{sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, SQLMaxPatternBytes},
}
