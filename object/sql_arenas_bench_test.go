//go:build !dosim_nosql

package object

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkSQLArenas runs databases on every processor at once (go test
// -cpu 2), each opening, writing, reading and closing its own, as a
// sweep's workers do: what sqlArenas is for. Compare it with the build
// tag dosim_libcmalloc (SQLite on libc's malloc, one lock for all):
//
//	go test ./object -run '^$' -bench SQLArenas -cpu 1,2 -count 6
//	go test ./object -run '^$' -bench SQLArenas -cpu 1,2 -count 6 -tags dosim_libcmalloc
func BenchmarkSQLArenas(b *testing.B) {
	var g atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		id := g.Add(1)
		db, err := openSQL(nil)
		if err != nil {
			b.Error(err)
			return
		}
		defer db.close()
		ctx := context.Background()
		if _, err := db.Exec(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT, w BLOB) WITHOUT ROWID"); err != nil {
			b.Error(err)
			return
		}
		for i := int64(0); pb.Next(); i++ {
			// A turn like booth's Hold: read, write a row, read the table,
			// and at times clear it. (A table WITHOUT ROWID: an INSERT that
			// may take a new rowid holds prngMu, which would measure that.)
			err := db.Transaction(ctx, func(ctx context.Context, tx *SQL) error {
				if _, err := tx.Exec(ctx, "SELECT v FROM t WHERE k = ?", i); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "INSERT INTO t VALUES (?, ?, ?)", i, fmt.Sprint("row ", id, " ", i), bytes.Repeat([]byte{1}, int(i%200))); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, "SELECT count(*), max(length(v)) FROM t")
				return err
			})
			if err == nil && i%50 == 49 {
				_, err = db.Exec(ctx, "DELETE FROM t")
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// sqlWorkload opens a database n times and runs a few statements on it,
// as an object's turns do.
func sqlWorkload(g, n int) error {
	ctx := context.Background()
	for i := range n {
		db, err := openSQL(nil)
		if err != nil {
			return err
		}
		_, err = db.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v BLOB)")
		for j := 0; err == nil && j < 5; j++ {
			_, err = db.Exec(ctx, "INSERT INTO t VALUES (?, ?)", fmt.Sprint(g, "-", i, "-", j), bytes.Repeat([]byte{byte(j)}, 100*j))
		}
		var c *Cursor
		if err == nil {
			c, err = db.Exec(ctx, "SELECT count(*) FROM t")
		}
		var count int
		if err == nil {
			err = c.One(&count)
		}
		db.close()
		if err == nil && count != 5 {
			err = fmt.Errorf("goroutine %d: %d rows, want 5", g, count)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
