//go:build !dosim_nosql && !dosim_libcmalloc

package object

import (
	"sync"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	"modernc.org/memory"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqlArenas is SQLite's allocator (SQLITE_CONFIG_MALLOC): the C heap in
// sqlArenaCount arenas, each an allocator of modernc.org/memory under a
// lock of its own, where modernc.org/libc's malloc is one allocator under
// one lock for the whole process. A connection allocates from the arena
// its C runtime state (its TLS) picks, so a sweep's workers, each on
// connections of its own, seldom wait for each other: on booth, two
// workers spent 6.7% of their CPU waiting for libc's lock and spinning on
// it. A block keeps its arena's number in the eight bytes before it, so
// that it goes back to that arena whoever frees it.
// BenchmarkSQLArenas says what it buys: run it as is and with the build
// tag dosim_libcmalloc, which leaves SQLite on libc's malloc.
type sqlArenas [sqlArenaCount]sqlArena

// sqlArenaCount is how many arenas there are: a few times the workers a
// sweep runs on a small machine.
const sqlArenaCount = 8

type sqlArena struct {
	mu sync.Mutex
	a  memory.Allocator
	_  [64]byte // its own cache line: arenas in use at once do not share one
}

// arenas is the process's: SQLite has one allocator.
var arenas sqlArenas

// arenaHeader is the bytes before each block: its arena's number, and
// SQLite's eight-byte alignment kept.
const arenaHeader = 8

func (s *sqlArenas) malloc(tls *libc.TLS, n int32) uintptr {
	if n <= 0 {
		return 0
	}
	i := uintptr(tls.ID) % sqlArenaCount
	ar := &s[i]
	ar.mu.Lock()
	p, err := ar.a.UintptrMalloc(int(n) + arenaHeader)
	ar.mu.Unlock()
	if err != nil || p == 0 {
		return 0
	}
	*(*uintptr)(cPtr(p)) = i
	return p + arenaHeader
}

func (s *sqlArenas) free(_ *libc.TLS, p uintptr) {
	if p == 0 {
		return
	}
	p -= arenaHeader
	ar := &s[*(*uintptr)(cPtr(p))]
	ar.mu.Lock()
	_ = ar.a.UintptrFree(p)
	ar.mu.Unlock()
}

func (s *sqlArenas) realloc(tls *libc.TLS, p uintptr, n int32) uintptr {
	if p == 0 {
		return s.malloc(tls, n)
	}
	if n <= 0 {
		s.free(tls, p)
		return 0
	}
	p -= arenaHeader
	ar := &s[*(*uintptr)(cPtr(p))]
	ar.mu.Lock()
	q, err := ar.a.UintptrRealloc(p, int(n)+arenaHeader) // the header goes with the bytes
	ar.mu.Unlock()
	if err != nil || q == 0 {
		return 0
	}
	return q + arenaHeader
}

func (s *sqlArenas) size(_ *libc.TLS, p uintptr) int32 {
	if p == 0 {
		return 0
	}
	return int32(memory.UintptrUsableSize(p-arenaHeader) - arenaHeader)
}

// SQLite calls these through C function pointers: functions, not
// method values, whose closures nothing in Go would keep alive.
func arenaMalloc(tls *libc.TLS, n int32) uintptr             { return arenas.malloc(tls, n) }
func arenaFree(tls *libc.TLS, p uintptr)                     { arenas.free(tls, p) }
func arenaRealloc(tls *libc.TLS, p uintptr, n int32) uintptr { return arenas.realloc(tls, p, n) }
func arenaSize(tls *libc.TLS, p uintptr) int32               { return arenas.size(tls, p) }
func arenaRoundup(_ *libc.TLS, n int32) int32                { return (n + 7) &^ 7 }
func arenaInit(*libc.TLS, uintptr) int32                     { return sqlite3.SQLITE_OK }
func arenaShutdown(*libc.TLS, uintptr)                       {}

// installArenas makes arenas SQLite's allocator; it must run before
// SQLite initialises (sql_memory.go's init). The methods' table lives as
// long as the process.
func installArenas(tls *libc.TLS) bool {
	m := libc.Xmalloc(tls, types.Size_t(unsafe.Sizeof(sqlite3.Tsqlite3_mem_methods{})))
	if m == 0 {
		return false
	}
	*(*sqlite3.Tsqlite3_mem_methods)(cPtr(m)) = sqlite3.Tsqlite3_mem_methods{
		FxMalloc:   cFuncPointer(arenaMalloc),
		FxFree:     cFuncPointer(arenaFree),
		FxRealloc:  cFuncPointer(arenaRealloc),
		FxSize:     cFuncPointer(arenaSize),
		FxRoundup:  cFuncPointer(arenaRoundup),
		FxInit:     cFuncPointer(arenaInit),
		FxShutdown: cFuncPointer(arenaShutdown),
	}
	va := libc.NewVaList(m)
	if va == 0 {
		return false
	}
	defer libc.Xfree(tls, va)
	return sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MALLOC, va) == sqlite3.SQLITE_OK
}
