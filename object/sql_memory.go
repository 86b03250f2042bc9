//go:build !dosim_nosql

package object

import (
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite gives every connection a lookaside allocator: a buffer of
// sqlLookasideSize × sqlLookasideSlots bytes, taken when the connection
// opens and written through at once (its free list), for small
// allocations. The compiled-in default is 1,200 × 40 bytes, about 48 KB,
// nearly half of what an object that used SQL keeps resident. An object's
// database sees a few short statements per call, so the buffer is small:
// memory per object is what lets 10,000 of them stay well under 1 GiB.
const (
	sqlLookasideSize  = 128
	sqlLookasideSlots = 16
)

// sqlLookasideApplied tells whether sqlite3_config took sqlLookasideSize
// and sqlLookasideSlots (false when SQLite was initialised before this
// package's init, by another package's; connections then get SQLite's
// default, which costs memory, not correctness).
var sqlLookasideApplied bool

// init sets the lookaside allocator of every connection SQLite opens in
// the process. sqlite3_config may run only before SQLite initialises,
// which it does on the first connection, so it runs here, before any
// code of this package or of its importers can open one. It is the one
// process-wide setting dosim makes: connections other packages open get
// the same small lookaside, which changes how fast small allocations are
// served, never a result.
func init() {
	tls := libc.NewTLS()
	defer tls.Close()
	va := libc.NewVaList(int32(sqlLookasideSize), int32(sqlLookasideSlots))
	if va == 0 {
		return
	}
	defer libc.Xfree(tls, va)
	sqlLookasideApplied = sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_LOOKASIDE, va) == sqlite3.SQLITE_OK
}
