//go:build !dosim_nosql

package object

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// deep calls f at depth frames down a fresh goroutine's stack, so that
// over a range of depths a call made in f meets the stack's end and Go
// moves the stack under it.
//
//go:noinline
func deep(depth int, f func()) int {
	var pad [16]byte
	if depth == 0 {
		f()
		return int(pad[0])
	}
	return deep(depth-1, f) + int(pad[depth%16])
}

// Q3, C1: a database's image reads its full size wherever on its stack the
// goroutine asks: sqlite3_serialize writes the size through a pointer, and
// one to a Go stack variable went stale when the stack moved during the
// call (the size read 0, so a snapshot took an empty database's key, and
// a sweep's cache of dumps filed one image's rows under another's: a
// violation found once in 45 sweeps of booth); so did the file pointer
// storeOf asks for. The out-parameters live in the connection's C memory
// now.
func TestQ3_AnImageReadsItsSizeWhereverTheStackMoves(t *testing.T) {
	db, err := openSQL(nil)
	require.NoError(t, err)
	defer db.close()
	// As a restore writes (loadExec notes the schema's history, so that
	// the connection, kept for the next database, is kept as what it is).
	require.NoError(t, db.loadExec("t", "CREATE TABLE t (a INTEGER, b TEXT)", nil))
	require.NoError(t, db.loadExec("t", "INSERT INTO t VALUES (1, 'x')", nil))
	db.mu.Lock()
	want := len(db.imageView())
	db.mu.Unlock()
	require.Positive(t, want)
	for depth := range 600 {
		got := make(chan int)
		go func() {
			deep(depth, func() {
				db.mu.Lock()
				defer db.mu.Unlock()
				got <- len(db.imageView())
			})
		}()
		require.Equal(t, want, <-got, "the image's size, at depth %d", depth)
		stored := make(chan error)
		go func() {
			deep(depth, func() {
				_, err := db.storeOf()
				stored <- err
			})
		}()
		require.NoError(t, <-stored, "the database's file, at depth %d", depth)
	}
}
