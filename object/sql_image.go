//go:build !dosim_nosql

package object

import (
	"errors"
	"fmt"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A database's image: every object's database is an in-memory file of
// SQLite's memdb VFS, whose bytes SQLite gives in one call
// (sqlite3_serialize) and takes in one call (sqlite3_deserialize). The
// connection keeps the dosim VFS (clock and randomness, rule Q3): only
// the file under its main database is memdb's. sqlImages (sql_images.go)
// keeps images and what was read of them, so that a restore copies bytes
// where it ran SQL, and a snapshot of bytes seen before reads no table.

// imageView is the database's image as SQLite holds it, not copied: it is
// valid until the next statement or until the database closes, so db.mu
// is held while it is read. nil for a database with no page yet.
func (db *SQL) imageView() []byte {
	var size int64
	p := sqlite3.Xsqlite3_serialize(db.raw.tls, db.raw.db, mainSchema, uintptr(unsafe.Pointer(&size)), sqlite3.SQLITE_SERIALIZE_NOCOPY)
	if p == 0 || size <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(cPtr(p)), size)
}

// mainSchema is "main" as C text, for sqlite3_serialize and
// sqlite3_deserialize; it lives as long as the process.
var mainSchema = func() uintptr {
	p, err := libc.CString("main")
	if err != nil {
		panic(err) // at init: the C heap cannot give five bytes
	}
	return p
}()

// deserialize makes the database's main file a memdb file holding a copy
// of image (nil: an empty database). The connection must have no
// statement running; its own state (the changes it counted, its last
// rowid) is a new connection's, as the database is only opened.
func (db *SQL) deserialize(image []byte) error {
	tls := db.raw.tls
	var buf uintptr
	if len(image) > 0 {
		if buf = sqlite3.Xsqlite3_malloc64(tls, uint64(len(image))); buf == 0 {
			return errors.New("out of memory copying the database")
		}
		copy(unsafe.Slice((*byte)(cPtr(buf)), len(image)), image)
	}
	// sqlite3_deserialize attaches the file with a statement of its own,
	// which the sandbox's authorizer would refuse an object.
	db.trusted = true
	rc := sqlite3.Xsqlite3_deserialize(tls, db.raw.db, mainSchema, buf, int64(len(image)), int64(len(image)),
		sqlite3.SQLITE_DESERIALIZE_FREEONCLOSE|sqlite3.SQLITE_DESERIALIZE_RESIZEABLE)
	db.trusted = false
	if rc != sqlite3.SQLITE_OK { // the buffer is freed, even then
		return fmt.Errorf("deserialize: %s", libc.GoString(sqlite3.Xsqlite3_errstr(tls, rc)))
	}
	return nil
}
