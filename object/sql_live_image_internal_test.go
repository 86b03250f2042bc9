//go:build !dosim_nosql

package object

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// pagesRead is the database's pages in use as its connection reads them,
// through the pager (sqlite_dbpage, of the pages dbstat says hold the
// schema, a table or an index), by number: inside a transaction, its own
// uncommitted writes too. A free page is left out: what it holds is read
// by nothing, and a freed page's last bytes may stay in the cache and
// never reach the file.
func pagesRead(t *testing.T, db *SQL) (pages map[int64][]byte, count int) {
	t.Helper()
	c, err := db.run("SELECT pgno, data FROM sqlite_dbpage WHERE pgno IN (SELECT pageno FROM dbstat)", nil)
	require.NoError(t, err)
	pages = map[int64][]byte{}
	for _, r := range c.rows {
		pages[r[0].(int64)] = r[1].([]byte)
	}
	n, err := db.run("PRAGMA page_count", nil)
	require.NoError(t, err)
	return pages, int(n.rows[0][0].(int64))
}

// requireSamePages fails unless image holds the pages in use as the
// connection reads them, and its size is the database's.
func requireSamePages(t *testing.T, db *SQL, image []byte, what string) {
	t.Helper()
	pages, count := pagesRead(t, db)
	require.NotEmpty(t, pages, what)
	size := len(pages[1])
	require.Equal(t, count*size, len(image), "%s: the image's size", what)
	for n, want := range pages {
		at := int(n-1) * size
		require.Equal(t, want, image[at:at+size], "%s: page %d", what, n)
	}
}

// liveNow is db.liveImage, as dumpCached takes it (db.mu held).
func liveNow(t *testing.T, db *SQL) []byte {
	t.Helper()
	db.mu.Lock()
	defer db.mu.Unlock()
	image, ok := db.liveImage(nil)
	require.True(t, ok, "the pager's state tells its pages")
	return image
}

// Q3, C1: inside a transaction the image a snapshot is known by (its key in
// the sweep-wide cache of dumps) is the pages the connection reads: the
// file's, with the transaction's own writes over them, through savepoints
// rolled back, pages freed and grown, rows that overflow a page, and a
// cache small enough to spill pages into the file before the commit. A
// page missed would file one database's rows under another's key.
func TestQ3_ALiveImageIsThePagesTheConnectionReads(t *testing.T) {
	for _, cacheSize := range []int{-2000, 2} { // the default's, and one that spills
		t.Run(fmt.Sprintf("cache_size=%d", cacheSize), func(t *testing.T) {
			db, err := openUnpooled()
			require.NoError(t, err)
			defer db.close()
			_, err = db.run(fmt.Sprintf("PRAGMA cache_size = %d", cacheSize), nil)
			require.NoError(t, err)
			require.Empty(t, liveNow(t, db), "a database with no page")
			_, err = db.run("SAVEPOINT empty", nil)
			require.NoError(t, err)
			require.Empty(t, liveNow(t, db), "a database with no page, in a transaction")
			_, err = db.run("RELEASE empty", nil)
			require.NoError(t, err)
			_, err = db.run("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)", nil)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(35, uint64(cacheSize+3000)))
			for round := range 40 {
				_, err := db.run("SAVEPOINT outer_sp", nil)
				require.NoError(t, err)
				requireSamePages(t, db, liveNow(t, db), fmt.Sprintf("round %d: a transaction not yet read", round))
				for op := range 12 {
					k := rng.IntN(60)
					var q string
					switch rng.IntN(6) {
					case 0, 1: // rows from a few bytes to several pages
						q = fmt.Sprintf("INSERT OR REPLACE INTO t VALUES (%d, randomblob(%d))", k, 1+rng.IntN(9000))
					case 2:
						q = fmt.Sprintf("DELETE FROM t WHERE k >= %d AND k < %d", k, k+rng.IntN(20))
					case 3:
						q = fmt.Sprintf("UPDATE t SET v = zeroblob(%d) WHERE k %% 3 = %d", rng.IntN(3000), k%3)
					case 4:
						q = "SAVEPOINT inner_sp"
					case 5:
						q = "ROLLBACK TO inner_sp"
					}
					if _, err := db.run(q, nil); err != nil {
						require.Contains(t, err.Error(), "no such savepoint", "round %d op %d: %s", round, op, q)
					}
					requireSamePages(t, db, liveNow(t, db), fmt.Sprintf("round %d op %d: after %s", round, op, q))
				}
				end := "RELEASE outer_sp"
				if rng.IntN(3) == 0 {
					end = "ROLLBACK TO outer_sp"
				}
				_, err = db.run(end, nil)
				require.NoError(t, err)
				if end != "RELEASE outer_sp" {
					_, err = db.run("RELEASE outer_sp", nil)
					require.NoError(t, err)
				}
				db.mu.Lock()
				require.False(t, db.inTransaction())
				db.mu.Unlock()
				image := liveNow(t, db)
				requireSamePages(t, db, image, fmt.Sprintf("round %d: no transaction open", round))
				db.mu.Lock()
				require.Equal(t, db.imageView(), image, "round %d: out of a transaction, the file's bytes", round)
				db.mu.Unlock()
			}
		})
	}
}
