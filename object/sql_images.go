package object

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"sync"
)

// sqlImages keeps, process-wide, what SQL a sweep would otherwise run
// again and again on the same bytes (issue 35):
//
//   - dumps: what dump read of an image, so that a snapshot of a database
//     whose bytes were dumped before (the same rows in the same pages, in
//     another seed, another replay) copies the result and reads no table;
//   - loads: the image a snapshot's SQL entries load into, so that a
//     restore (verify's, every replayed turn's) copies bytes where it ran
//     a CREATE and an INSERT per row.
//
// Both are functions of their key alone, so what a sweep finds never
// depends on which worker filled them. An image is known by two 64-bit
// hashes of its bytes with independent seeds, as the explorer's memo of
// verdicts knows a history: keeping every image to compare it byte for
// byte cost a booth sweep 9 MB. BenchmarkScenarioSeed (explore) is what
// it is for. Its size is bounded: it starts again when full (rule H2).
type sqlImages struct {
	mu    sync.Mutex
	dumps map[imageKey]map[string]any // snapshot keys to entries, never handed out
	loads map[string]*loadedImage
	size  int // bytes kept, roughly
}

// imageKey knows an image, and whether its rows were dumped in rowid
// order (dump's inOrder).
type imageKey struct {
	h1, h2  uint64
	inOrder bool
}

// loadedImage is the image a snapshot's SQL entries load into, with the
// schema history loading them left (noteSchema).
type loadedImage struct {
	image  []byte
	schema sqlSchema
}

// maxImageBytes bounds the bytes sqlImages keeps.
const maxImageBytes = 16 << 20

// images is the process's sqlImages.
var images = &sqlImages{}

// imageSeeds are imageKeyOf's seeds: random, but what they key lives and
// dies with the process, so no output depends on them.
var imageSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// The bytes of a database file's header that count its writes (the file
// change counter, at 24, and the version-valid-for number, at 92): two
// images that differ only there hold the same database, and a dump reads
// the same of them.
const (
	changeCounterAt = 24
	validForAt      = 92
)

// imageKeyOf is img's key, but for the header's counts of writes and the
// unallocated gap of each b-tree page (between its cell pointers and its
// cells), which SQLite reads nothing from: two images that differ only
// there hold the same rows, and hashing a gap was most of the cost of a
// key (a booth database is four pages of a few hundred bytes each). A
// page whose header does not read as a b-tree page's is hashed whole.
// Only the pages a dump reads need be exact: a page whose first byte
// happens to read as a b-tree page's type while it is not one is a free
// page or a pointer-map page (an overflow or freelist trunk page starts
// with a page number, under 2^24 within DefaultSQLMaxBytes), neither of
// which a dump reads. TestQ2_AnImagesKeyLeavesOutOnlyItsPagesGaps holds
// it.
func imageKeyOf(img []byte, inOrder bool) imageKey {
	var h [2]maphash.Hash
	for i := range h {
		h[i].SetSeed(imageSeeds[i])
	}
	write := func(p []byte) {
		for i := range h {
			_, _ = h[i].Write(p)
		}
	}
	pageSize := imagePageSize(img)
	if pageSize == 0 { // not a database file SQLite wrote: every byte
		write(img)
		return imageKey{h[0].Sum64(), h[1].Sum64(), inOrder}
	}
	var bounds [8]byte
	for at := 0; at < len(img); at += pageSize {
		page := img[at : at+pageSize]
		from, to := pageGap(page, at == 0)
		binary.LittleEndian.PutUint32(bounds[:4], uint32(from))
		binary.LittleEndian.PutUint32(bounds[4:], uint32(to))
		write(bounds[:])
		head := page[:from]
		if at == 0 { // the header's counts of writes left out
			write(head[:changeCounterAt])
			write(head[changeCounterAt+4 : validForAt])
			head = head[validForAt+4:]
		}
		write(head)
		write(page[to:])
	}
	return imageKey{h[0].Sum64(), h[1].Sum64(), inOrder}
}

// imagePageSize is the page size the header of img gives, or 0 when img
// is not whole pages of a size SQLite allows, or too short for a header.
func imagePageSize(img []byte) int {
	const headerSize = 100
	if len(img) < headerSize {
		return 0
	}
	size := int(binary.BigEndian.Uint16(img[16:18]))
	if size == 1 {
		size = 65536
	}
	if size < 512 || size&(size-1) != 0 || len(img)%size != 0 {
		return 0
	}
	return size
}

// pageGap is the unallocated gap of a b-tree page, page[from:to]: after
// its cell pointer array, before its cell content area. first is the
// file's first page, whose b-tree header follows the file's. A page that
// does not read as a b-tree page, or whose bounds do not hold, has none
// (from and to are both past its header: the whole page is hashed).
func pageGap(page []byte, first bool) (from, to int) {
	at := 0
	if first {
		at = 100
	}
	none := min(validForAt+4, len(page)) // past the file header's counts, which imageKeyOf cuts
	var size int
	switch page[at] {
	case 0x02, 0x05: // interior pages, of an index and of a table
		size = 12
	case 0x0a, 0x0d: // leaf pages
		size = 8
	default:
		return none, none
	}
	cells := int(binary.BigEndian.Uint16(page[at+3:]))
	content := int(binary.BigEndian.Uint16(page[at+5:]))
	if content == 0 {
		content = 65536
	}
	from = at + size + 2*cells
	if from > content || content > len(page) {
		return none, none
	}
	return from, content
}

// dumped copies into snap what was dumped of the image k before, if it
// was: the entries as kept, not copies, for a snapshot nobody changes
// (toRead).
func (c *sqlImages) dumped(k imageKey, snap map[string]any, toRead bool) bool {
	c.mu.Lock()
	entries, ok := c.dumps[k]
	c.mu.Unlock()
	for key, v := range entries { // never changed once kept: copied unlocked
		if !toRead {
			v = copyEntry(v)
		}
		snap[key] = v
	}
	return ok
}

// keepDump keeps what dump read of the image k (a copy of its own), the
// SQLSnapshotPrefix keys of snap.
func (c *sqlImages) keepDump(k imageKey, snap map[string]any) {
	entries, size := map[string]any{}, 0
	for key, v := range snap {
		if isSQLKey(key) {
			entries[key] = copyEntry(v)
			size += entrySize(v)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.room(size)
	if c.dumps == nil {
		c.dumps = map[imageKey]map[string]any{}
	}
	c.dumps[k] = entries
}

// entrySize is about the bytes a snapshot entry holds.
func entrySize(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 64
		for k, e := range x {
			n += len(k) + entrySize(e)
		}
		return n
	case []any:
		n := 24
		for _, e := range x {
			n += entrySize(e)
		}
		return n
	case string:
		return 16 + len(x)
	case []byte:
		return 24 + len(x)
	}
	return 16
}

// loaded is the image snapshot key loads into, if it was kept.
func (c *sqlImages) loaded(key string) (*loadedImage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.loads[key]
	return l, ok
}

// keepLoad keeps the image snapshot key loads into.
func (c *sqlImages) keepLoad(key string, l *loadedImage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.room(len(key) + len(l.image))
	if c.loads == nil {
		c.loads = map[string]*loadedImage{}
	}
	c.loads[key] = l
}

// room makes room for n more bytes: when they would not fit, everything
// kept goes. c.mu is held.
func (c *sqlImages) room(n int) {
	if c.size+n > maxImageBytes {
		c.dumps, c.loads, c.size = nil, nil, 0
	}
	c.size += n
}

// copyEntry copies a snapshot entry as dump makes them: maps, lists and
// blobs are the copy's own. It is internal/clone.Copy for the one shape a
// dump has, without reflection or cycle tracking: it runs on every
// snapshot a sweep takes.
func copyEntry(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyEntry(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyEntry(e)
		}
		return out
	case []byte:
		return slices.Clone(x)
	}
	return v
}

// loadKey is the key of snap's SQL entries in sqlImages's loads: every
// value with its type, maps in key order. ok is false when a value is of
// a type the key does not spell (the restore then loads without keeping
// its image).
func loadKey(snap map[string]any) (key string, ok bool) {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(snap)) {
		if !isSQLKey(k) {
			continue
		}
		b = appendKeyString(b, 'k', k)
		if b, ok = appendKeyValue(b, snap[k]); !ok {
			return "", false
		}
	}
	return string(b), true
}

// appendKeyList spells a list in loadKey's key.
func appendKeyList[T any](b []byte, tag byte, x []T) ([]byte, bool) {
	b = binary.AppendUvarint(append(b, tag), uint64(len(x)))
	for _, e := range x {
		var ok bool
		if b, ok = appendKeyValue(b, e); !ok {
			return b, false
		}
	}
	return b, true
}

func appendKeyString(b []byte, tag byte, s string) []byte {
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendKeyValue spells v in loadKey's key.
func appendKeyValue(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, 'n'), true
	case bool:
		if x {
			return append(b, 't'), true
		}
		return append(b, 'f'), true
	case int64:
		return binary.AppendVarint(append(b, 'i'), x), true
	case int:
		return binary.AppendVarint(append(b, 'I'), int64(x)), true
	case float64:
		return binary.BigEndian.AppendUint64(append(b, 'd'), math.Float64bits(x)), true
	case string:
		return appendKeyString(b, 's', x), true
	case []byte:
		return appendKeyString(b, 'b', string(x)), true
	case []any:
		return appendKeyList(b, 'l', x)
	case [][]any:
		return appendKeyList(b, 'L', x)
	case map[string]any:
		b = binary.AppendUvarint(append(b, 'm'), uint64(len(x)))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			b = appendKeyString(b, 'k', k)
			var ok bool
			if b, ok = appendKeyValue(b, x[k]); !ok {
				return b, false
			}
		}
		return b, true
	}
	return b, false
}

// imageFor is the image snap's SQL entries load into, with the schema
// history they leave: kept from before, or loaded now into a database of
// its own, whose image is kept. Every restore gets its database from an
// image, loaded now or before, so that a restored connection is the same
// (a fresh one over the bytes) whichever it was.
func imageFor(snap map[string]any) (*loadedImage, error) {
	key, keep := loadKey(snap)
	if keep {
		if l, ok := images.loaded(key); ok {
			return l, nil
		}
	}
	db, err := openSQL(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: Restore: %w", ErrStorage, err)
	}
	defer db.close()
	if err := db.load(snap); err != nil {
		return nil, fmt.Errorf("%w: Restore: SQL %w", ErrStorage, err)
	}
	l := &loadedImage{schema: db.schema}
	db.mu.Lock()
	l.image = slices.Clone(db.imageView())
	db.mu.Unlock()
	if keep {
		images.keepLoad(key, l)
	}
	return l, nil
}

// liveImages holds the buffers dumpCached reads a transaction's image
// into: scratch bytes, kept by no database (an idle object keeps none).
var liveImages = sync.Pool{New: func() any { return new([]byte) }}

// dumpCached is dump through sqlImages: what was dumped of the same bytes
// before is copied (shared, toRead), else the database is dumped and what
// it read kept.
func (db *SQL) dumpCached(snap map[string]any, inOrder, toRead bool) error {
	db.mu.Lock()
	if db.closing || db.closed || db.conn == nil {
		db.mu.Unlock()
		return db.dump(snap, inOrder)
	}
	var k imageKey
	if db.inTransaction() {
		// Inside a transaction (a Transaction's, the turn's savepoint)
		// what the connection reads is not all in the file's bytes yet.
		buf := liveImages.Get().(*[]byte)
		image, ok := db.liveImage(*buf)
		if ok {
			k = imageKeyOf(image, inOrder)
			*buf = image[:0] // grown, it serves the next
		}
		liveImages.Put(buf)
		if !ok {
			db.mu.Unlock()
			return db.dump(snap, inOrder)
		}
	} else {
		k = imageKeyOf(db.imageView(), inOrder)
	}
	db.mu.Unlock()
	if images.dumped(k, snap, toRead) {
		return nil
	}
	if err := db.dump(snap, inOrder); err != nil {
		return err
	}
	db.mu.Lock()
	closed := db.closing || db.closed // closed under the dump: it read nothing
	db.mu.Unlock()
	if !closed {
		images.keepDump(k, snap)
	}
	return nil
}
