package object

import (
	"slices"
)

// keyRange is the half-open range [lo, hi) of keys a ListOptions selects;
// without hi it has no upper end.
type keyRange struct {
	lo, hi string
	hasHi  bool
}

// rangeOf turns opts' Prefix, Start, StartAfter and End into one key
// range: a key has the prefix p exactly when p <= key < prefixEnd(p), and
// is after s exactly when s+"\x00" <= key. A range whose lo is not below
// its hi is empty.
func rangeOf(opts ListOptions) keyRange {
	r := keyRange{lo: max(opts.Start, opts.Prefix)}
	if opts.StartAfter != "" {
		r.lo = max(r.lo, opts.StartAfter+"\x00")
	}
	if opts.End != "" {
		r.hi, r.hasHi = opts.End, true
	}
	if pe, ok := prefixEnd(opts.Prefix); ok && (!r.hasHi || pe < r.hi) {
		r.hi, r.hasHi = pe, true
	}
	return r
}

func (r keyRange) has(k string) bool { return k >= r.lo && (!r.hasHi || k < r.hi) }

// prefixEnd returns the least key greater than every key starting with p,
// or false when there is none (p empty or all 0xff bytes).
func prefixEnd(p string) (string, bool) {
	n := len(p)
	for n > 0 && p[n-1] == 0xff {
		n--
	}
	if n == 0 {
		return "", false
	}
	return p[:n-1] + string([]byte{p[n-1] + 1}), true
}

// index returns the key index of the outermost storage, building it on
// first use.
func (s *Storage) index() *keyIndex {
	if s.idx == nil {
		keys := make([]string, 0, len(s.data))
		for k := range s.data {
			keys = append(keys, k)
		}
		s.idx = newKeyIndex(keys)
	}
	return s.idx
}

// list returns the entries opts selects: it walks the outermost storage's
// index from the first key in range and merges in the pending writes of
// the transactions s sits in (the innermost write of a key wins).
func (s *Storage) list(opts ListOptions) []Entry {
	r := rangeOf(opts)
	root := s
	var pending map[string]*any
	for ; root.txn != nil; root = root.parent {
		for k, w := range root.writes {
			if !r.has(k) {
				continue
			}
			if pending == nil {
				pending = map[string]*any{}
			}
			if _, inner := pending[k]; !inner {
				pending[k] = w
			}
		}
	}
	over := make([]string, 0, len(pending))
	for k := range pending {
		over = append(over, k)
	}
	// before reports whether key a comes before key b in the listing.
	before := func(a, b string) bool { return a < b }
	x := root.index()
	var p cursor
	var inRange func(k string) bool
	if opts.Reverse {
		slices.Sort(over)
		slices.Reverse(over)
		before = func(a, b string) bool { return a > b }
		if r.hasHi {
			p = x.prev(x.seek(r.hi))
		} else {
			p = x.prev(cursor{c: len(x.chunks)})
		}
		inRange = func(k string) bool { return k >= r.lo }
	} else {
		slices.Sort(over)
		p = x.seek(r.lo)
		inRange = func(k string) bool { return !r.hasHi || k < r.hi }
	}
	step := x.next
	if opts.Reverse {
		step = x.prev
	}
	out := make([]Entry, 0, min(max(opts.Limit, 0), 1024))
	for opts.Limit == 0 || len(out) < opts.Limit {
		var bk string
		bok := x.valid(p)
		if bok {
			bk = x.at(p)
			bok = inRange(bk)
		}
		if !bok && len(over) == 0 {
			break
		}
		if len(over) > 0 && (!bok || !before(bk, over[0])) {
			k := over[0]
			over = over[1:]
			if bok && bk == k {
				p = step(p)
			}
			if w := pending[k]; w != nil {
				out = append(out, Entry{Key: k, value: *w})
			}
			continue
		}
		out = append(out, Entry{Key: bk, value: root.data[bk]})
		p = step(p)
	}
	return out
}
