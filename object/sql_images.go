package object

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
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
// depends on which worker filled them. An image is compared byte for
// byte, never by its hash alone. BenchmarkScenarioSeed (explore) is what
// it is for. Its size is bounded: it starts again when full (rule H2).
type sqlImages struct {
	mu    sync.Mutex
	seed  maphash.Seed
	dumps map[uint64][]*dumpedImage
	loads map[string]*loadedImage
	size  int // bytes kept
}

// dumpedImage is what dump read of an image.
type dumpedImage struct {
	image   []byte
	inOrder bool
	entries map[string]any // snapshot keys to entries, never handed out
}

// loadedImage is the image a snapshot's SQL entries load into, with the
// schema history loading them left (noteSchema).
type loadedImage struct {
	image  []byte
	schema sqlSchema
}

// maxImageBytes bounds the bytes sqlImages keeps.
const maxImageBytes = 64 << 20

// images is the process's sqlImages.
var images = &sqlImages{seed: maphash.MakeSeed()}

// The bytes of a database file's header that count its writes (the file
// change counter, at 24, and the version-valid-for number, at 92): two
// images that differ only there hold the same database, and a dump reads
// the same of them.
const (
	changeCounterAt = 24
	validForAt      = 92
)

// imageParts cuts an image around the header's write counts.
func imageParts(img []byte) [3][]byte {
	if len(img) < validForAt+4 {
		return [3][]byte{img}
	}
	return [3][]byte{img[:changeCounterAt], img[changeCounterAt+4 : validForAt], img[validForAt+4:]}
}

func (c *sqlImages) hash(img []byte, inOrder bool) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, p := range imageParts(img) {
		_, _ = h.Write(p)
	}
	if inOrder {
		_ = h.WriteByte(1)
	}
	return h.Sum64()
}

// sameImage reports whether a and b hold the same database.
func sameImage(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	pa, pb := imageParts(a), imageParts(b)
	for i := range pa {
		if !bytes.Equal(pa[i], pb[i]) {
			return false
		}
	}
	return true
}

// dumped copies into snap what was dumped of img before, if it was.
func (c *sqlImages) dumped(img []byte, inOrder bool, h uint64, snap map[string]any) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.dumps[h] {
		if d.inOrder == inOrder && sameImage(d.image, img) {
			for k, v := range d.entries {
				snap[k] = copyEntry(v)
			}
			return true
		}
	}
	return false
}

// keepDump keeps what dump read of img (a copy of its own), the
// SQLSnapshotPrefix keys of snap.
func (c *sqlImages) keepDump(img []byte, inOrder bool, h uint64, snap map[string]any) {
	entries := map[string]any{}
	for k, v := range snap {
		if isSQLKey(k) {
			entries[k] = copyEntry(v)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.room(len(img))
	if c.dumps == nil {
		c.dumps = map[uint64][]*dumpedImage{}
	}
	c.dumps[h] = append(c.dumps[h], &dumpedImage{image: img, inOrder: inOrder, entries: entries})
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
// blobs are the copy's own.
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
	for _, k := range sortedKeys(snap) {
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

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
		b = binary.AppendUvarint(append(b, 'l'), uint64(len(x)))
		for _, e := range x {
			var ok bool
			if b, ok = appendKeyValue(b, e); !ok {
				return b, false
			}
		}
		return b, true
	case [][]any:
		b = binary.AppendUvarint(append(b, 'L'), uint64(len(x)))
		for _, e := range x {
			var ok bool
			if b, ok = appendKeyValue(b, e); !ok {
				return b, false
			}
		}
		return b, true
	case map[string]any:
		b = binary.AppendUvarint(append(b, 'm'), uint64(len(x)))
		for _, k := range sortedKeys(x) {
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

// dumpCached is dump through sqlImages: what was dumped of the same bytes
// before is copied, else the database is dumped and what it read kept.
func (db *SQL) dumpCached(snap map[string]any, inOrder bool) error {
	db.mu.Lock()
	// Inside a transaction (a Transaction's, the turn's savepoint) what
	// the connection reads is not yet in the file's bytes.
	if db.closing || db.closed || db.conn == nil || db.inTransaction() {
		db.mu.Unlock()
		return db.dump(snap, inOrder)
	}
	view := db.imageView()
	h := images.hash(view, inOrder)
	if images.dumped(view, inOrder, h, snap) {
		db.mu.Unlock()
		return nil
	}
	img := slices.Clone(view)
	db.mu.Unlock()
	if err := db.dump(snap, inOrder); err != nil {
		return err
	}
	images.keepDump(img, inOrder, h, snap)
	return nil
}
