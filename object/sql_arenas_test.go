//go:build !dosim_nosql && !dosim_libcmalloc

package object

import (
	"bytes"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestQ1_SQLiteAllocatesFromArenas: SQLite's allocator is sqlArenas,
// and a block goes back to the arena it came from whichever connection
// frees or grows it (two C runtime states, one allocating, the other
// growing and freeing), its bytes kept by a realloc.
func TestQ1_SQLiteAllocatesFromArenas(t *testing.T) {
	require.True(t, sqlArenasApplied, "sqlite3_config(SQLITE_CONFIG_MALLOC) was refused")
	a, b := libc.NewTLS(), libc.NewTLS()
	defer a.Close()
	defer b.Close()
	for _, n := range []int{1, 8, 100, 2048, 4096, 70000} {
		p := sqlite3.Xsqlite3_malloc(a, int32(n))
		require.NotZero(t, p, "malloc %d", n)
		require.Zero(t, p%8, "SQLite's eight-byte alignment")
		require.Equal(t, uintptr(a.ID)%sqlArenaCount, *(*uintptr)(cPtr(p - arenaHeader)), "the arena a's state picks")
		require.GreaterOrEqual(t, int(sqlite3.Xsqlite3_msize(a, p)), n)
		want := bytes.Repeat([]byte{0xa5}, n)
		copy(unsafe.Slice((*byte)(cPtr(p)), n), want)
		q := sqlite3.Xsqlite3_realloc(b, p, int32(2*n))
		require.NotZero(t, q)
		require.Equal(t, want, unsafe.Slice((*byte)(cPtr(q)), n), "realloc keeps the bytes")
		require.Equal(t, uintptr(a.ID)%sqlArenaCount, *(*uintptr)(cPtr(q - arenaHeader)), "and the arena")
		sqlite3.Xsqlite3_free(b, q)
	}
}

// TestQ1_DatabasesOnManyGoroutinesShareTheArenas runs databases on eight
// goroutines at once, each opening, writing, reading and closing its own
// (under -race, and with every block checked as it goes back): the
// arenas' locks keep each allocator to one goroutine at a time.
func TestQ1_DatabasesOnManyGoroutinesShareTheArenas(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- sqlWorkload(g, 20)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
