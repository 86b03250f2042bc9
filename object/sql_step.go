//go:build !dosim_nosql

package object

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// An object's statements run on SQLite's C API, as the splitter's parse
// does, not through database/sql's driver interfaces: the driver turned
// the text of a column declared DATE, DATETIME or TIMESTAMP into a
// time.Time, so that '2025-01-01T00:15:00.123Z' read back as
// "2025-01-01 00:15:00" where the platform gives back the text stored,
// and it built each query's column names, declared types and row buffers
// anew. A value reads as what SQLite stores: an integer, a float, text, a
// blob or NULL (rule Q1).

// cStmt is a statement prepared on a connection's handle, with the names
// of its result columns as last read.
type cStmt struct {
	p    uintptr // *sqlite3_stmt
	tls  *libc.TLS
	cols []string
}

// prepareStmt prepares text, one statement, on db's connection. The
// caller quiets the parse of an object's statement (quietPrepare).
func (db *SQL) prepareStmt(text string) (cStmt, error) {
	tls := db.raw.tls
	sql, err := libc.CString(text)
	if err != nil {
		return cStmt{}, err
	}
	defer libc.Xfree(tls, sql)
	pp := tls.Alloc(8)
	defer tls.Free(8)
	if rc := sqlite3.Xsqlite3_prepare_v2(tls, db.raw.db, sql, int32(len(text)), pp, 0); rc != sqlite3.SQLITE_OK {
		return cStmt{}, db.sqliteErr(rc)
	}
	return cStmt{p: *(*uintptr)(cPtr(pp)), tls: tls}, nil
}

// finalize frees the statement.
func (st *cStmt) finalize() {
	if st.p != 0 {
		sqlite3.Xsqlite3_finalize(st.tls, st.p)
		st.p = 0
	}
}

// stepStmt binds args to st, runs it to its end and reads every row, at
// most SQLMaxResultBytes of them, then resets it for the next run.
func (db *SQL) stepStmt(st *cStmt, args []driver.NamedValue) (rawCursor, error) {
	if st.p == 0 { // only space and comments
		return rawCursor{}, nil
	}
	tls := st.tls
	var allocs []uintptr
	defer func() {
		sqlite3.Xsqlite3_reset(tls, st.p)
		sqlite3.Xsqlite3_clear_bindings(tls, st.p)
		for _, p := range allocs {
			libc.Xfree(tls, p)
		}
	}()
	allocs, err := db.bindArgs(st.p, args)
	if err != nil {
		return rawCursor{}, err
	}
	var out rawCursor
	size := 0
	for first := true; ; first = false {
		rc := sqlite3.Xsqlite3_step(tls, st.p)
		if rc != sqlite3.SQLITE_ROW && rc != sqlite3.SQLITE_DONE {
			return rawCursor{}, db.sqliteErr(rc)
		}
		if first { // a statement prepared again as it ran may have others
			out.cols = st.columns()
		}
		if rc == sqlite3.SQLITE_DONE {
			return out, nil
		}
		row := make([]any, len(out.cols))
		for i := range row {
			row[i] = columnValue(tls, st.p, int32(i))
			size += valueSize(row[i])
		}
		if size > SQLMaxResultBytes {
			return rawCursor{}, fmt.Errorf("its rows are more than %d bytes (SQLMaxResultBytes): read them in parts (LIMIT and OFFSET, or a WHERE on a key)", SQLMaxResultBytes)
		}
		out.rows = append(out.rows, row)
	}
}

// columns are st's result columns' names: the ones read before while
// SQLite's are the same (a cursor keeps the slice, never changed).
func (st *cStmt) columns() []string {
	n := int(sqlite3.Xsqlite3_column_count(st.tls, st.p))
	same := len(st.cols) == n
	for i := 0; same && i < n; i++ {
		p := sqlite3.Xsqlite3_column_name(st.tls, st.p, int32(i))
		same = p != 0 && cView(p) == st.cols[i]
	}
	if same {
		return st.cols
	}
	cols := make([]string, n)
	for i := range cols {
		cols[i] = libc.GoString(sqlite3.Xsqlite3_column_name(st.tls, st.p, int32(i)))
	}
	st.cols = cols
	return cols
}

// cView is the NUL-terminated C string at p, viewed in place: for a
// comparison only, never kept.
func cView(p uintptr) string {
	n := 0
	for *(*byte)(cPtr(p + uintptr(n))) != 0 {
		n++
	}
	return unsafe.String((*byte)(cPtr(p)), n)
}

// columnValue is column i of the row st is on, as SQLite stores it.
func columnValue(tls *libc.TLS, p uintptr, i int32) any {
	switch sqlite3.Xsqlite3_column_type(tls, p, i) {
	case sqlite3.SQLITE_INTEGER:
		return sqlite3.Xsqlite3_column_int64(tls, p, i)
	case sqlite3.SQLITE_FLOAT:
		return sqlite3.Xsqlite3_column_double(tls, p, i)
	case sqlite3.SQLITE_TEXT:
		s := sqlite3.Xsqlite3_column_text(tls, p, i)
		n := int(sqlite3.Xsqlite3_column_bytes(tls, p, i))
		if s == 0 || n == 0 {
			return ""
		}
		return string(unsafe.Slice((*byte)(cPtr(s)), n))
	case sqlite3.SQLITE_BLOB:
		b := sqlite3.Xsqlite3_column_blob(tls, p, i)
		n := int(sqlite3.Xsqlite3_column_bytes(tls, p, i))
		if b == 0 || n == 0 {
			return []byte(nil) // an empty blob, not NULL: a []byte of none
		}
		return append([]byte(nil), unsafe.Slice((*byte)(cPtr(b)), n)...)
	}
	return nil
}

// bindArgs binds args to p's parameters as modernc.org/sqlite's driver
// did: the i-th ? takes the i-th argument, ?NNN (or $NNN) the NNN-th; a
// parameter by name (:x, @x, $x) finds none, as Exec's arguments have no
// names, and the error says so. It
// returns the C memory of the text and blobs bound, to free once p is
// reset.
func (db *SQL) bindArgs(p uintptr, args []driver.NamedValue) (allocs []uintptr, err error) {
	tls := db.raw.tls
	n := int(sqlite3.Xsqlite3_bind_parameter_count(tls, p))
	for i := 1; i <= n; i++ {
		name := ""
		if c := sqlite3.Xsqlite3_bind_parameter_name(tls, p, int32(i)); c != 0 {
			name = libc.GoString(c)
		}
		ord := i
		if name != "" {
			ord = 0
			if (name[0] == '?' || name[0] == '$') && len(name) > 1 && name[1] >= '1' && name[1] <= '9' {
				if k, err := strconv.Atoi(name[1:]); err == nil {
					ord = k
				}
			}
		}
		switch {
		case ord == 0:
			return allocs, fmt.Errorf("parameter %s has a name: Exec's arguments bind by position only (?, or ?NNN for the NNN-th)", name)
		case ord > len(args):
			if name == "" {
				name = fmt.Sprintf("? (the %d-th)", i)
			}
			return allocs, fmt.Errorf("parameter %s: %d argument(s) given (?NNN takes the NNN-th)", name, len(args))
		}
		var rc int32
		switch v := args[ord-1].Value.(type) {
		case nil:
			rc = sqlite3.Xsqlite3_bind_null(tls, p, int32(i))
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(tls, p, int32(i), v)
		case float64:
			rc = sqlite3.Xsqlite3_bind_double(tls, p, int32(i), v)
		case bool:
			b := int64(0)
			if v {
				b = 1
			}
			rc = sqlite3.Xsqlite3_bind_int64(tls, p, int32(i), b)
		case string:
			c, err := libc.CString(v)
			if err != nil {
				return allocs, err
			}
			allocs = append(allocs, c)
			rc = sqlite3.Xsqlite3_bind_text(tls, p, int32(i), c, int32(len(v)), 0)
		case []byte:
			if v == nil {
				rc = sqlite3.Xsqlite3_bind_null(tls, p, int32(i))
				break
			}
			c := libc.Xmalloc(tls, types.Size_t(max(len(v), 1)))
			if c == 0 {
				return allocs, errors.New("out of memory")
			}
			allocs = append(allocs, c)
			copy(unsafe.Slice((*byte)(cPtr(c)), len(v)), v)
			rc = sqlite3.Xsqlite3_bind_blob(tls, p, int32(i), c, int32(len(v)), 0)
		default:
			return allocs, fmt.Errorf("%T cannot be bound", v)
		}
		if rc != sqlite3.SQLITE_OK {
			return allocs, db.sqliteErr(rc) // a value past SQLMaxValueBytes
		}
	}
	return allocs, nil
}

// sqliteErr is the error SQLite's result code rc left on db's connection,
// in the platform's words (explain).
func (db *SQL) sqliteErr(rc int32) error {
	msg := libc.GoString(sqlite3.Xsqlite3_errmsg(db.raw.tls, db.raw.db))
	if msg == "" {
		msg = libc.GoString(sqlite3.Xsqlite3_errstr(db.raw.tls, rc))
	}
	return &sqliteError{msg: sqlMessage(msg, int(rc)), err: sqliteCode(rc)}
}

// sqliteCode is a SQLite result code, the error a sqliteError wraps.
type sqliteCode int32

func (c sqliteCode) Error() string { return "SQLite result code " + strconv.Itoa(int(c)) }
