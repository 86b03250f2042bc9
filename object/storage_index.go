package object

import (
	"slices"
	"sort"
)

// keyIndex keeps a storage's keys in key-byte order so that List can seek
// to its first key in O(log n) and read a page in O(limit) (rule L8).
//
// The keys sit in chunks of at most chunkMax sorted keys, the chunks in
// order: an insert or a delete moves at most chunkMax keys and, when a
// chunk splits or empties, one slice header per chunk, instead of every
// key as a single sorted slice would. No chunk is empty.
type keyIndex struct {
	chunks [][]string
}

// chunkMax is how many keys a chunk holds before it splits in two.
const chunkMax = 512

// newKeyIndex returns the index of keys, in any order and without repeats.
func newKeyIndex(keys []string) *keyIndex {
	slices.Sort(keys)
	x := &keyIndex{}
	for len(keys) > 0 {
		n := min(len(keys), chunkMax/2)
		x.chunks = append(x.chunks, slices.Clip(keys[:n]))
		keys = keys[n:]
	}
	return x
}

// cursor is a position in a keyIndex: chunk c, offset i in it. A cursor
// with c == len(chunks) is past the end; c < 0 is before the start.
type cursor struct{ c, i int }

// seek returns the position of the first key >= key (past the end if none).
func (x *keyIndex) seek(key string) cursor {
	c := sort.Search(len(x.chunks), func(c int) bool {
		ch := x.chunks[c]
		return ch[len(ch)-1] >= key
	})
	if c == len(x.chunks) {
		return cursor{c: c}
	}
	i, _ := slices.BinarySearch(x.chunks[c], key)
	return cursor{c: c, i: i}
}

// valid reports whether p is at a key.
func (x *keyIndex) valid(p cursor) bool { return p.c >= 0 && p.c < len(x.chunks) }

// at returns the key at p, which must be valid.
func (x *keyIndex) at(p cursor) string { return x.chunks[p.c][p.i] }

// next returns the position after p.
func (x *keyIndex) next(p cursor) cursor {
	if p.i+1 < len(x.chunks[p.c]) {
		return cursor{c: p.c, i: p.i + 1}
	}
	return cursor{c: p.c + 1}
}

// prev returns the position before p; p may be past the end.
func (x *keyIndex) prev(p cursor) cursor {
	if p.i > 0 {
		return cursor{c: p.c, i: p.i - 1}
	}
	if p.c == 0 {
		return cursor{c: -1}
	}
	return cursor{c: p.c - 1, i: len(x.chunks[p.c-1]) - 1}
}

// insert adds key, which must not be in the index.
func (x *keyIndex) insert(key string) {
	if len(x.chunks) == 0 {
		x.chunks = [][]string{{key}}
		return
	}
	p := x.seek(key)
	if p.c == len(x.chunks) { // after every key: append to the last chunk
		p = cursor{c: p.c - 1, i: len(x.chunks[p.c-1])}
	}
	ch := slices.Insert(x.chunks[p.c], p.i, key)
	if len(ch) <= chunkMax {
		x.chunks[p.c] = ch
		return
	}
	half := len(ch) / 2
	right := slices.Clone(ch[half:])
	clear(ch[half:]) // drop the moved strings from the left chunk's array
	x.chunks[p.c] = ch[:half]
	x.chunks = slices.Insert(x.chunks, p.c+1, right)
}

// remove deletes key if it is in the index.
func (x *keyIndex) remove(key string) {
	p := x.seek(key)
	if !x.valid(p) || x.at(p) != key {
		return
	}
	ch := slices.Delete(x.chunks[p.c], p.i, p.i+1)
	if len(ch) == 0 {
		x.chunks = slices.Delete(x.chunks, p.c, p.c+1)
		return
	}
	x.chunks[p.c] = ch
}
