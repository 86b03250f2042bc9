//go:build !dosim_nosql

package object

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The dosim VFS (rule Q3): SQLite reads the time and its randomness
// through its VFS, so the VFS dosim opens its databases with answers
// from the database's runtime: xCurrentTime from the virtual clock (every
// 'now', CURRENT_TIMESTAMP, CURRENT_DATE and CURRENT_TIME, however it
// reaches a date function), xRandomness from the seeded source (the seed
// of SQLite's own generator, which chooses a rowid once the largest is
// taken). 'localtime' is UTC, the time zone of the platform's runtime.
//
// The VFS is also the process's default, because SQLite seeds its
// generator from the default VFS. For a connection that is not one of
// dosim's, every method does what the VFS it wraps does: a program that
// opens its own SQLite databases beside dosim's sees no difference.

// vfsName is the dosim VFS's name; memVFSName, the name of the VFS an
// object's database opens with: SQLite's memdb VFS, whose files are in
// memory and whose bytes sqlite3_serialize gives in one piece
// (sql_image.go), but with the dosim VFS under it for the clock and the
// randomness (memdb asks the VFS it wraps for them).
const (
	vfsName    = "dosim"
	memVFSName = "dosim-memdb"
)

var (
	vfsOnce sync.Once
	vfsErr  error // why the VFS could not be registered
	// vfsBase is the VFS the dosim VFS wraps (the default one before).
	vfsBase *sqlite3.Tsqlite3_vfs
)

// The callbacks, kept in variables: the VFS holds their C pointers.
var (
	vfsCurrentTimeFn      = vfsCurrentTime
	vfsCurrentTimeInt64Fn = vfsCurrentTimeInt64
	vfsRandomnessFn       = vfsRandomness
	vfsLocaltimeFn        = vfsLocaltime
)

// registerVFS registers the dosim VFS as the default, and makes
// 'localtime' go through vfsLocaltime.
func registerVFS() {
	tls := libc.NewTLS()
	defer tls.Close()
	base := sqlite3.Xsqlite3_vfs_find(tls, 0)
	if base == 0 {
		vfsErr = errString("SQLite has no default VFS")
		return
	}
	p := libc.Xmalloc(tls, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	name, err := libc.CString(vfsName)
	if p == 0 || err != nil {
		vfsErr = errString("out of memory registering the dosim VFS")
		return
	}
	vfsBase = (*sqlite3.Tsqlite3_vfs)(cPtr(base))
	v := (*sqlite3.Tsqlite3_vfs)(cPtr(p))
	*v = *vfsBase
	v.FpNext, v.FzName = 0, name
	v.FxCurrentTime = cFuncPointer(vfsCurrentTimeFn)
	v.FxRandomness = cFuncPointer(vfsRandomnessFn)
	if v.FiVersion >= 2 {
		v.FxCurrentTimeInt64 = cFuncPointer(vfsCurrentTimeInt64Fn)
	}
	if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 1); rc != sqlite3.SQLITE_OK {
		vfsErr = errString("SQLite refused the dosim VFS")
		return
	}
	if vfsErr = registerMemVFS(tls, p); vfsErr != nil {
		return
	}
	va := libc.NewVaList(int32(2), cFuncPointer(vfsLocaltimeFn))
	if va == 0 {
		vfsErr = errString("out of memory setting 'localtime'")
		return
	}
	defer libc.Xfree(tls, va)
	sqlite3.Xsqlite3_test_control(tls, sqlite3.SQLITE_TESTCTRL_LOCALTIME_FAULT, va)
}

// registerMemVFS registers the memdb VFS again as memVFSName, over the
// dosim VFS at dosim.
func registerMemVFS(tls *libc.TLS, dosim uintptr) error {
	memdb, err := libc.CString("memdb")
	if err != nil {
		return errString("out of memory registering the dosim memdb VFS")
	}
	defer libc.Xfree(tls, memdb)
	mem := sqlite3.Xsqlite3_vfs_find(tls, memdb)
	if mem == 0 {
		return errString("SQLite has no memdb VFS")
	}
	p := libc.Xmalloc(tls, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	name, err := libc.CString(memVFSName)
	if p == 0 || err != nil {
		return errString("out of memory registering the dosim memdb VFS")
	}
	v := (*sqlite3.Tsqlite3_vfs)(cPtr(p))
	*v = *(*sqlite3.Tsqlite3_vfs)(cPtr(mem))
	v.FpNext, v.FzName, v.FpAppData = 0, name, dosim
	if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
		return errString("SQLite refused the dosim memdb VFS")
	}
	return nil
}

type errString string

func (e errString) Error() string { return string(e) }

// julianEpochMillis is the Unix epoch as SQLite's julian day number, in
// milliseconds.
const julianEpochMillis = 210866760000000

// vfsCurrentTimeInt64 is xCurrentTimeInt64: the database's virtual clock,
// in milliseconds since the julian epoch.
func vfsCurrentTimeInt64(tls *libc.TLS, pVfs uintptr, piNow uintptr) int32 {
	db := dbOf(tls)
	if db == nil {
		return callCurrentTimeInt64(vfsBase.FxCurrentTimeInt64, tls, pVfs, piNow)
	}
	*(*int64)(cPtr(piNow)) = db.clock().UnixMilli() + julianEpochMillis
	return sqlite3.SQLITE_OK
}

// vfsCurrentTime is xCurrentTime: the clock in julian days.
func vfsCurrentTime(tls *libc.TLS, pVfs uintptr, prNow uintptr) int32 {
	db := dbOf(tls)
	if db == nil {
		return callCurrentTime(vfsBase.FxCurrentTime, tls, pVfs, prNow)
	}
	*(*float64)(cPtr(prNow)) = float64(db.clock().UnixMilli()+julianEpochMillis) / 86400000
	return sqlite3.SQLITE_OK
}

// vfsRandomness is xRandomness: the seed of SQLite's generator, drawn
// from the database's seeded source (lockPRNG makes the statement that
// needs it reseed it).
func vfsRandomness(tls *libc.TLS, pVfs uintptr, nByte int32, zOut uintptr) int32 {
	db := dbOf(tls)
	out := unsafe.Slice((*byte)(cPtr(zOut)), nByte)
	if db == nil {
		if opening.Load() {
			clear(out) // see opening
			return nByte
		}
		return callRandomness(vfsBase.FxRandomness, tls, pVfs, nByte, zOut)
	}
	if db.preparing {
		clear(out) // see quietPrepare
		return nByte
	}
	r := db.rand()
	for i := 0; i < len(out); i += 8 {
		v := r.Uint64()
		for k := 0; k < 8 && i+k < len(out); k++ {
			out[i+k] = byte(v >> (8 * k))
		}
	}
	return nByte
}

// vfsLocaltime is SQLite's localtime_r for the 'localtime' and 'utc'
// modifiers: UTC on dosim's connections, the machine's zone elsewhere. It
// returns 0 on success.
func vfsLocaltime(tls *libc.TLS, t uintptr, pTm uintptr) int32 {
	var r uintptr
	if dbOf(tls) != nil {
		r = libc.Xgmtime_r(tls, t, pTm)
	} else {
		r = libc.Xlocaltime_r(tls, t, pTm)
	}
	if r == 0 {
		return 1
	}
	return 0
}

// prngMu serialises the statements that may draw from SQLite's generator,
// which is one for the whole process: each reseeds it from its own
// database's seeded source. Opening a connection draws from it too, so
// connect holds it. It serialises a sweep's workers on those statements
// only (a new rowid's INSERT, a trigger, a virtual table's write), not on
// every one that writes (stmtMayDraw).
var prngMu sync.Mutex

// opening is set, under prngMu, while connect opens a connection, which is
// not yet known to dbOf. SQLite's FTS5 draws a seed as a connection opens;
// with the generator just reset by a write statement's lockPRNG, that draw
// reseeds it, and from the base VFS it read /dev/urandom: a system call per
// database (6% of BenchmarkManyObjectsSQL) and a generator state no seed
// decides. It gets zeros instead; the database's own draws reseed the
// generator before any statement of it can use it (lockPRNG).
var opening atomic.Bool

// lockPRNG readies SQLite's generator for a statement of db that may
// draw from it (stmtMayDraw): it reseeds from db's source if it draws at
// all. The caller calls the returned function when the statement is done.
func (db *SQL) lockPRNG() func() {
	prngMu.Lock()
	sqlite3.Xsqlite3_randomness(db.raw.tls, 0, 0)
	return prngMu.Unlock
}

// quietPrepare runs prepare, SQLite parsing one of the object's
// statements, with the generator seeded from zeros meanwhile and reset
// before and after; the caller holds prngMu. A parse draws only to name a
// result column whose name four others already have ("a:" and a random
// number, sqlite3ColumnsFromExprList: a subquery's or a view's columns,
// or a CREATE TABLE ... AS SELECT's, which the schema keeps). That name
// must be the same in every run of a seed, whichever connection parses
// the statement and whether one parsed it before, and the parse must not
// take a draw from the database's source, which the statement's own run
// (a new rowid) or a later one may need: it read whatever the generator
// held, and so differed from run to run.
func (db *SQL) quietPrepare(prepare func()) {
	sqlite3.Xsqlite3_randomness(db.raw.tls, 0, 0)
	db.preparing = true
	defer func() {
		db.preparing = false
		sqlite3.Xsqlite3_randomness(db.raw.tls, 0, 0)
	}()
	prepare()
}

// The base VFS's methods, called through their C pointers.

func callCurrentTimeInt64(fp uintptr, tls *libc.TLS, pVfs, piNow uintptr) int32 {
	if fp == 0 {
		return sqlite3.SQLITE_ERROR
	}
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, pVfs, piNow)
}

func callCurrentTime(fp uintptr, tls *libc.TLS, pVfs, prNow uintptr) int32 {
	if fp == 0 {
		return sqlite3.SQLITE_ERROR
	}
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, pVfs, prNow)
}

func callRandomness(fp uintptr, tls *libc.TLS, pVfs uintptr, n int32, out uintptr) int32 {
	if fp == 0 {
		return 0
	}
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, pVfs, n, out)
}

// clock is the database's virtual clock: its runtime's, else the epoch.
func (db *SQL) clock() time.Time {
	db.readHost = true
	if db.host != nil {
		return db.host.Now()
	}
	return time.Unix(0, 0)
}
