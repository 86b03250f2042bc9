//go:build !dosim_nosql

package object

import (
	"errors"
	"slices"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A database's image: every object's database is an in-memory file of
// SQLite's memdb VFS (memVFSName, over the dosim VFS for the clock and
// the randomness, rule Q3), whose bytes SQLite gives in one call
// (sqlite3_serialize). sqlImages (sql_images.go)
// keeps images and what was read of them, so that a restore copies bytes
// where it ran SQL, and a snapshot of bytes seen before reads no table.

// imageView is the database's image as SQLite holds it, not copied: it is
// valid until the next statement or until the database closes, so db.mu
// is held while it is read. nil for a database with no page yet.
func (db *SQL) imageView() []byte {
	var p uintptr
	size := outParam[int64](db.raw.tls, func(pSize uintptr) {
		p = sqlite3.Xsqlite3_serialize(db.raw.tls, db.raw.db, mainSchema, pSize, sqlite3.SQLITE_SERIALIZE_NOCOPY)
	})
	if p == 0 || size <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(cPtr(p)), size)
}

// liveImage is the database's image as its connection reads it now,
// inside a transaction too (a Transaction's, the turn's savepoint), when
// the memdb file holds only what was committed: the file's bytes, with the
// pages the transaction changed and its cache still holds laid over them,
// in the size the transaction gives the database. It is copied into buf
// (reused). ok is false when the pager is in a state whose pages it
// cannot tell (an I/O error); the caller then reads no image.
// TestQ3_ALiveImageIsThePagesTheConnectionReads holds it, page by page,
// against sqlite_dbpage, which reads them through the pager.
func (db *SQL) liveImage(buf []byte) (image []byte, ok bool) {
	pager := db.pager()
	switch pager.FeState {
	case sqlite3.PAGER_OPEN: // no transaction has read the file: it holds it all
		return append(buf[:0], db.imageView()...), true
	case sqlite3.PAGER_ERROR:
		return nil, false
	}
	store, err := db.storeOf()
	if err != nil {
		return nil, false
	}
	pageSize := int(pager.FpageSize)
	size := int(pager.FdbSize) * pageSize
	if size == 0 {
		return buf[:0], true
	}
	image = slices.Grow(buf[:0], size)[:size]
	file := []byte(nil)
	if store.Fsz > 0 {
		file = unsafe.Slice((*byte)(cPtr(store.FaData)), store.Fsz)
	}
	clear(image[copy(image, file):])
	cache := (*sqlite3.TPCache)(cPtr(pager.FpPCache))
	for p := cache.FpDirty; p != 0; {
		page := (*sqlite3.TPgHdr)(cPtr(p))
		if at := (int(page.Fpgno) - 1) * pageSize; page.Fpgno > 0 && at < size {
			copy(image[at:at+pageSize], unsafe.Slice((*byte)(cPtr(page.FpData)), pageSize))
		}
		p = page.FpDirtyNext
	}
	return image, true
}

// outParam calls call with the address of an out-parameter of type T that
// SQLite writes to, zeroed, and returns what it wrote. The parameter lives
// in the connection's C memory (TLS.Alloc), never in a Go variable passed
// as uintptr(unsafe.Pointer(&v)): SQLite's C is Go code here, deep enough
// that the goroutine's stack may grow during the call, and Go then moves
// the variable without updating the bare address the callee writes
// through. imageView read a size of 0 that way, now and then, for a
// database with pages (TestQ3_AnImageReadsItsSizeWhereverTheStackMoves).
func outParam[T any](tls *libc.TLS, call func(p uintptr)) T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	p := tls.Alloc(size)
	defer tls.Free(size)
	*(*T)(cPtr(p)) = zero
	call(p)
	return *(*T)(cPtr(p))
}

// mainSchema is "main" as C text, for sqlite3_serialize and
// sqlite3_deserialize; it lives as long as the process.
var mainSchema = cString("main")

// cString is s as C text that lives as long as the process.
func cString(s string) uintptr {
	p, err := libc.CString(s)
	if err != nil {
		panic(err) // at init: the C heap cannot give a few bytes
	}
	return p
}

// setImage gives the database's memdb file a copy of image (nil: no
// bytes), as sqlite3_deserialize sets its fields, but without the ATTACH
// that reads the old schema first and opens the file again (a fifth of a
// restore's cost). The connection has no statement running and no
// transaction open. Its pager has read nothing of the file, as when it
// just opened (then the bytes are as if they had been there), or reads it
// again before its next statement (reset).
func (db *SQL) setImage(image []byte) error {
	store, err := db.storeOf()
	if err != nil {
		return err
	}
	if store.FnRdLock != 0 || store.FnWrLock != 0 || store.FnMmap != 0 {
		return errors.New("the database's file is in use")
	}
	tls := db.raw.tls
	var buf uintptr
	if len(image) > 0 {
		if buf = sqlite3.Xsqlite3_malloc64(tls, uint64(len(image))); buf == 0 {
			return errors.New("out of memory copying the database")
		}
		copy(unsafe.Slice((*byte)(cPtr(buf)), len(image)), image)
	}
	sqlite3.Xsqlite3_free(tls, store.FaData)
	store.FaData, store.Fsz, store.FszAlloc = buf, int64(len(image)), int64(len(image))
	if store.FszMax < store.FszAlloc {
		store.FszMax = store.FszAlloc
	}
	return nil
}

// pager is the pager of the database's main file: what a PRAGMA would
// set in it, set without preparing one.
func (db *SQL) pager() *sqlite3.TPager {
	conn := (*sqlite3.Tsqlite3)(cPtr(db.raw.db))
	main := (*sqlite3.TDb)(cPtr(conn.FaDb)) // aDb[0]
	bt := (*sqlite3.TBtree)(cPtr(main.FpBt))
	return (*sqlite3.TPager)(cPtr((*sqlite3.TBtShared)(cPtr(bt.FpBt)).FpPager))
}

// limitPages limits the database to n pages, as PRAGMA max_page_count =
// n does (its opcode sets the pager's bound, which no other call sets),
// without the statement: preparing it cost a fresh connection a parse and
// the schema's first read.
func (db *SQL) limitPages(n uint32) {
	db.pager().FmxPgno = n
}

// schemaCookie is SQLite's schema cookie of the main database as the
// connection holds it (every change of the schema moves it), read from
// the file first if the connection has not read the schema yet; -1 once
// the database is closed.
func (db *SQL) schemaCookie() int32 {
	db.mu.Lock()
	defer db.mu.Unlock() // the handle stays open for the call
	if db.closing || db.closed || db.conn == nil {
		return -1
	}
	conn := (*sqlite3.Tsqlite3)(cPtr(db.raw.db))
	schema := (*sqlite3.TSchema)(cPtr((*sqlite3.TDb)(cPtr(conn.FaDb)).FpSchema))
	if schema.FschemaFlags&sqlite3.DB_SchemaLoaded == 0 {
		// It reads the schema (sqlite3Init) before it looks for the table.
		sqlite3.Xsqlite3_table_column_metadata(db.raw.tls, db.raw.db, 0, schemaTableName, 0, 0, 0, 0, 0, 0)
	}
	return schema.Fschema_cookie
}

// schemaTableName is "sqlite_schema" as C text; it lives as long as the process.
var schemaTableName = cString("sqlite_schema")

// dropCache frees the pages the connection's cache holds, once no
// transaction is open: the memdb file holds them too, and between two
// statements an object's database needs only the file (an idle object's
// resident memory, runtime's BenchmarkManyObjectsSQL: 83 KB with the
// cache kept, 70 KB without; the sweeps' seeds cost the same).
func (db *SQL) dropCache() {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closing || db.closed || db.conn == nil || db.depth > 0 || db.inTransaction() {
		return
	}
	sqlite3.Xsqlite3_db_release_memory(db.raw.tls, db.raw.db)
}
