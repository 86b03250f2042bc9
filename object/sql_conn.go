package object

import (
	"database/sql/driver"
	"fmt"
	"runtime"
	"sync/atomic"
)

// A database's connection: a new one (connect), or one kept from a closed
// database of the same schema history (sqlConnPool), and what lives as
// long as it.

// sqlSeq names the private in-memory databases.
var sqlSeq atomic.Uint64

// openSQL opens a fresh, empty database limited to DefaultSQLMaxBytes.
func openSQL(host Host) (*SQL, error) { return openSQLImage(host, nil, emptySchema) }

// openSQLImage opens a database holding a copy of image (sql_image.go),
// whose schema has the history schema, limited to DefaultSQLMaxBytes: on
// a connection kept from a closed database of the same schema
// (sqlConnPool), or a new one.
func openSQLImage(host Host, image []byte, schema sqlSchema) (*SQL, error) {
	if db, ok := openPooled(host, image, schema); ok {
		return db, nil
	}
	db := unopened(host, image, schema)
	oc, err := connect(db)
	if err != nil {
		return nil, err
	}
	db.use(oc)
	if err := db.setImage(image); err != nil {
		db.cleanup.Stop()
		oc.close()
		return nil, fmt.Errorf("%w: open: %w", ErrSQL, err)
	}
	// The size limit. The sorter's and subqueries' scratch files are in
	// memory: the VFS, memdb's, keeps every file there.
	db.limitPages(DefaultSQLMaxBytes / sqlPageSize)
	return db, nil
}

// unopened is the database of host that is to hold image, of the schema
// history schema, before it has a connection: new (pristine) when it is
// to hold nothing.
func unopened(host Host, image []byte, schema sqlSchema) *SQL {
	return &SQL{host: host, schema: schema, pristine: len(image) == 0 && schema == emptySchema}
}

// openPooled is openSQLImage on a connection kept from a closed database
// of the same schema history (sqlConnPool); ok is false when none is kept
// or it could not take image.
func openPooled(host Host, image []byte, schema sqlSchema) (*SQL, bool) {
	oc, ok := connPool.take(schema)
	if !ok {
		return nil, false
	}
	db := unopened(host, image, schema)
	db.use(oc)
	err := db.setImage(image)
	if err == nil {
		err = db.reset(image)
	}
	if err != nil {
		db.cleanup.Stop()
		oc.close()
		return nil, false
	}
	return db, true
}

// use makes oc the database's connection.
func (db *SQL) use(oc openConn) {
	db.oc, db.conn, db.raw, db.prepared = oc, oc.conn, oc.raw, oc.prepared
	oc.point(db)
	// The connection's C memory is not the Go heap's: free it when the
	// database is unreachable, if nobody closed it before.
	db.cleanup = runtime.AddCleanup(db, openConn.close, oc)
}

// openConn is an open connection and what lives as long as it: its
// driver (connect), which point points at the database it serves, its
// handle and its prepared statements.
type openConn struct {
	conn     driver.Conn
	release  func() // hands the driver on, once the connection is closed
	point    func(*SQL)
	raw      rawConn
	prepared *sqlPrepared
}

// close closes the connection, then hands its driver on.
func (c openConn) close() {
	c.prepared.close()
	_ = c.conn.Close()
	c.release()
}
