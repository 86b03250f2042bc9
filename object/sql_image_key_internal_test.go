//go:build !dosim_nosql

package object

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// openUnpooled opens a new database whose connection, closed, is kept
// for no other: its schema's history is unknown (sqlSchema{}). A test that
// writes its schema with db.run, which notes no history, would otherwise
// leave in the pool, as a new database's, a connection that has read its
// tables (and PRAGMAs it set), and a later test taking it would fail.
func openUnpooled() (*SQL, error) { return openSQLImage(nil, nil, sqlSchema{}) }

// dumpOfImage is what dump reads of a database holding image.
func dumpOfImage(t *testing.T, image []byte) (map[string]any, error) {
	t.Helper()
	db, err := openSQLImage(nil, image, sqlSchema{})
	require.NoError(t, err)
	defer db.close()
	snap := map[string]any{}
	err = db.dump(snap, true)
	return snap, err
}

// Q2, C1: an image's key (what the sweep-wide cache of dumps knows it by)
// leaves out only bytes no dump reads: each b-tree page's unallocated gap
// and the header's counts of writes. A byte flipped anywhere in a
// database of tables, an index, a row over several overflow pages and
// freed space either moves the key, or leaves a database that dumps the
// same rows; and the gaps are left out indeed (a flip there keeps the
// key).
func TestQ2_AnImagesKeyLeavesOutOnlyItsPagesGaps(t *testing.T) {
	db, err := openUnpooled()
	require.NoError(t, err)
	defer db.close()
	for _, q := range []string{
		"CREATE TABLE holds (key TEXT PRIMARY KEY, seat INTEGER NOT NULL UNIQUE, until TEXT, note BLOB)",
		"CREATE TABLE log (n INTEGER PRIMARY KEY AUTOINCREMENT, line TEXT)",
		"INSERT INTO holds VALUES ('a', 1, '2025-01-01 00:15:00', NULL), ('b', 2, '2025-01-01 00:16:00', x'00ff')",
		"INSERT INTO holds VALUES ('c', 3, 'later', zeroblob(9000))", // over two overflow pages
		"INSERT INTO log (line) VALUES ('one'), ('two'), ('three')",
		"DELETE FROM log WHERE n = 2", // a freeblock
		"INSERT INTO holds VALUES ('d', 4, 'x', randomblob(5000))",
		"DELETE FROM holds WHERE key = 'd'", // free pages
	} {
		_, err := db.run(q, nil)
		require.NoError(t, err, q)
	}
	db.mu.Lock()
	image := slices.Clone(db.imageView())
	db.mu.Unlock()
	require.Positive(t, len(image)%sqlPageSize+len(image)/sqlPageSize)
	want, err := dumpOfImage(t, image)
	require.NoError(t, err)
	require.Len(t, want[SQLSnapshotPrefix+"holds"].(map[string]any)["rows"], 3)
	key := imageKeyOf(image, true)
	flip := func(at int) []byte {
		flipped := slices.Clone(image)
		flipped[at] ^= 0x5a
		return flipped
	}
	keeps := make([]bool, len(image))
	for at := range image {
		image[at] ^= 0x5a // flipped in place and back: a copy per byte cost the test most of its time under -race
		keeps[at] = imageKeyOf(image, true) == key
		image[at] ^= 0x5a
	}
	kept, moved := 0, 0
	for at, keep := range keeps {
		if !keep {
			moved++
			continue
		}
		kept++
		// Dumped: the first and last byte of each run of flips that keep
		// the key, and one in 61 between (a dump opens a database).
		edge := at == 0 || at == len(image)-1 || !keeps[at-1] || !keeps[at+1]
		if !edge && at%61 != 0 {
			continue
		}
		got, err := dumpOfImage(t, flip(at))
		require.NoError(t, err, "a flip at byte %d kept the key", at)
		require.Equal(t, want, got, "a flip at byte %d kept the key, and the rows moved", at)
	}
	t.Logf("%d bytes: %d flips moved the key, %d kept it (dumped alike)", len(image), moved, kept)
	require.Greater(t, kept, len(image)/2, "the gaps of mostly empty pages are left out")
	require.Positive(t, moved)
	require.NotEqual(t, key, imageKeyOf(image, false), "a dump in rowid order is another key")
}
