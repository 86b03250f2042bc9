//go:build dosim_nosql

package object

import (
	"database/sql/driver"
	"fmt"
)

// Built with the tag dosim_nosql (make fuzz), dosim links no SQLite: an
// object's SQL() database cannot open, and says why. See sql_driver.go.

func connect(*SQL) (openConn, error) {
	return openConn{}, fmt.Errorf("%w: open: this build leaves SQLite out (the build tag dosim_nosql, for fuzzing)", ErrSQL)
}

func explain(err error) error { return err }

// rawConn is empty: there is no SQLite connection.
type rawConn struct{}

// sqlSplitter cuts nothing: there is no SQLite.
type sqlSplitter struct{}

func (db *SQL) split(string) (*sqlSplitter, error) {
	return nil, fmt.Errorf("this build leaves SQLite out (the build tag dosim_nosql)")
}

func (sp *sqlSplitter) free()                        {}
func (sp *sqlSplitter) next() (sqlStmt, bool, error) { return sqlStmt{}, false, nil }
func (sp *sqlSplitter) more() bool                   { return false }

func (db *SQL) lockPRNG() func() { return func() {} }

// cStmt is no statement: there is no SQLite.
type cStmt struct{}

func (db *SQL) prepareStmt(string) (cStmt, error) {
	return cStmt{}, fmt.Errorf("this build leaves SQLite out (the build tag dosim_nosql)")
}

func (db *SQL) stepStmt(*cStmt, []driver.NamedValue) (rawCursor, error) { return rawCursor{}, nil }

func (st *cStmt) finalize() {}

func stmtMayDraw(cStmt) bool { return true }

func (db *SQL) quietPrepare(prepare func()) { prepare() }

func (db *SQL) inTransaction() bool { return false }

func (db *SQL) changesSoFar() int64 { return 0 }

func sqlTableName(uintptr) string { return "" }

func (db *SQL) countRows(bool) {}

func (db *SQL) imageView() []byte { return nil }

func (db *SQL) liveImage([]byte) ([]byte, bool) { return nil, false }

func (db *SQL) setImage([]byte) error { return nil }

func (db *SQL) limitPages(uint32) {}

// sqlConnPool keeps nothing: no connection opens.
type sqlConnPool struct{}

var connPool sqlConnPool

func (sqlConnPool) take(sqlSchema) (openConn, bool) { return openConn{}, false }

func (sqlConnPool) put(*SQL) bool { return false }

func (db *SQL) reset([]byte) error { return nil }

func (db *SQL) schemaCookie() int32 { return 0 }

func (db *SQL) dropCache() {}
