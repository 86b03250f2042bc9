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
// Fifteen slots, 1,920 bytes, and the eight bytes sqlArenas puts before a
// block, fill a block of 2 KB, whose rest SQLite makes a slot of too (it
// sizes the buffer by what its allocator gave): sixteen would ask for
// 2,056 bytes, and take a block of 4 KB.
const (
	sqlLookasideSize  = 128
	sqlLookasideSlots = 15
)

// sqlLookasideApplied tells whether sqlite3_config took sqlLookasideSize
// and sqlLookasideSlots (false when SQLite was initialised before this
// package's init, by another package's; connections then get SQLite's
// default, which costs memory, not correctness).
var sqlLookasideApplied bool

// sqlArenasApplied tells whether SQLite allocates from sqlArenas (not
// under the build tag dosim_libcmalloc, or when SQLite was initialised
// before this package's init).
var sqlArenasApplied bool

// init sets the lookaside allocator of every connection SQLite opens in
// the process. sqlite3_config may run only before SQLite initialises,
// which it does on the first connection, so it runs here, before any
// code of this package or of its importers can open one, and so does
// the allocator's (sqlArenas). They are the process-wide settings dosim
// makes: connections other packages open get the same small lookaside and
// allocator, which change how fast small allocations are served, never a
// result.
func init() {
	tls := libc.NewTLS()
	defer tls.Close()
	sqlArenasApplied = installArenas(tls)
	va := libc.NewVaList(int32(sqlLookasideSize), int32(sqlLookasideSlots))
	if va == 0 {
		return
	}
	defer libc.Xfree(tls, va)
	sqlLookasideApplied = sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_LOOKASIDE, va) == sqlite3.SQLITE_OK
}
