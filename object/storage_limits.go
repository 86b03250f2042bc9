package object

import (
	"fmt"
	"math"
	"reflect"
	"time"
)

// Storage limits (rule L8), the platform's: an operation that breaks one
// fails with an error wrapping ErrStorage, worded as the platform words
// it, and changes nothing.
const (
	// MaxKeyBytes is the longest key, in bytes (of its UTF-8 encoding).
	// The empty key is a key like any other.
	MaxKeyBytes = 2048
	// MaxValueBytes is the largest value, in bytes serialised, as the
	// platform advertises it. As on the platform, a value is refused only
	// when its serialised size exceeds MaxValueBytes by more than
	// valueSlack bytes (workerd's ENFORCED_MAX_VALUE_SIZE, 131,106), the
	// cushion for the serialiser's tags and lengths, so that a
	// MaxValueBytes-long string or byte slice is stored.
	//
	// A Go value's serialised size is the length of the V8 serialisation
	// (format version 15, the one workerd stores) of its JavaScript
	// counterpart, which serialisedSize computes without serialising:
	//   - 2 bytes of header (0xFF and the version), once per value;
	//   - nil (nil pointer, map, slice or interface): 1 byte (null);
	//   - a bool: 1 byte;
	//   - a number that is an integer in V8's small-integer range
	//     [-2^30, 2^30-1]: 1 byte of tag and its zigzag varint; any other
	//     number: 9 bytes (a tag and a double); time.Time and
	//     time.Duration count as a Date and a number, 9 bytes;
	//   - a string: 1 byte of tag, the varint of its length and its bytes
	//     (its UTF-8 bytes: V8 writes Latin-1 text one byte a character,
	//     which is the same for ASCII, and other text as UTF-16, which
	//     dosim does not count, so for non-ASCII text the platform's count
	//     may differ by up to a factor of two);
	//   - a []byte: raw, as a Uint8Array over its own ArrayBuffer: 1 byte
	//     of tag, the varint of its length and its bytes, then 4 bytes and
	//     the varint of its length again for the view;
	//   - a slice or array: as a dense array, 1 byte of tag and the varint
	//     of its length, its elements, 2 bytes and the varint of its
	//     length again;
	//   - a map or struct: as an object, 1 byte of tag, each key (a map's
	//     key counted as a value, a struct field's name as a string; every
	//     field, exported or not, as the copy keeps every field) and its
	//     value, then 1 byte and the varint of the number of keys;
	//   - a complex number: as an array of two numbers;
	//   - a pointer, map or slice met a second time in the same value: a
	//     back-reference, 1 byte and the varint of its number, so shared
	//     parts count once (a value that contains itself is refused before
	//     it is measured: rule O5).
	//
	// So a string of n ASCII characters counts n + 6 bytes for n from
	// 16,384 to 2,097,151: 131,100 characters are stored (131,106 bytes)
	// and 131,101 are refused ("A value of size 131107 was provided."), as
	// on the platform; a 131,072-byte []byte counts 131,085 and is stored.
	MaxValueBytes = 128 << 10
	// MaxKeysPerCall is the most keys one GetMany of a key-value-backed
	// object may name (a SQLite-backed object's takes any number).
	MaxKeysPerCall = 128
)

// valueSlack is how far past MaxValueBytes a value's serialised size may
// go before it is refused: workerd's ENFORCED_MAX_VALUE_SIZE is
// ADVERTISED_MAX_VALUE_SIZE + 34.
const valueSlack = 34

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
)

// checkSize refuses a value (already copied) larger than MaxValueBytes
// serialised, with the platform's message. Numbers, bools, times and
// strings up to MaxValueBytes bytes are never too large, so the common
// small value is not measured at all.
func checkSize(op, key string, v any) error {
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64,
		float32, float64, time.Duration, time.Time:
		return nil
	case string:
		if len(x) <= MaxValueBytes {
			return nil
		}
	}
	if n := serialisedSize(v); n > MaxValueBytes+valueSlack {
		msg := fmt.Sprintf("Values cannot be larger than %d bytes. A value of size %d was provided.", MaxValueBytes, n)
		return fmt.Errorf("%w: %s %s: %s", ErrStorage, op, shortKey(key), msg)
	}
	return nil
}

// serialisedSize returns v's size as MaxValueBytes defines it. It walks
// the value once, as the copy into storage did.
func serialisedSize(v any) int {
	z := sizer{}
	z.walk(reflect.ValueOf(v))
	return 2 + z.n // the header
}

type sizer struct {
	n    int
	seen map[seenKey]int
}

type seenKey struct {
	ptr uintptr
	len int
	typ reflect.Type
}

// again reports whether the pointer, map or slice v was met before, and
// marks it met; when it was, it counts the back-reference.
func (z *sizer) again(v reflect.Value) bool {
	k := seenKey{ptr: v.Pointer(), typ: v.Type()}
	if v.Kind() == reflect.Slice {
		k.len = v.Len()
	}
	if z.seen == nil {
		z.seen = map[seenKey]int{}
	}
	if id, ok := z.seen[k]; ok {
		z.n += 1 + varintLen(uint64(id))
		return true
	}
	z.seen[k] = len(z.seen)
	return false
}

// varintLen is the length of n as a base-128 varint.
func varintLen(n uint64) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// int counts an integer: a small integer or a double.
func (z *sizer) int(i int64) {
	if i >= -1<<30 && i < 1<<30 {
		z.n += 1 + varintLen(uint64(i<<1)^uint64(i>>63))
		return
	}
	z.n += 9
}

// float counts a number: as int does when it is a whole number, else a
// double.
func (z *sizer) float(f float64) {
	if f == math.Trunc(f) && f >= -1<<30 && f < 1<<30 && !(f == 0 && math.Signbit(f)) {
		z.int(int64(f))
		return
	}
	z.n += 9
}

// str counts a string of n bytes.
func (z *sizer) str(n int) { z.n += 1 + varintLen(uint64(n)) + n }

// nilOr counts null for a nil v and reports whether it did, or counts a
// back-reference for a v met before.
func (z *sizer) nilOr(v reflect.Value) bool {
	if v.IsNil() {
		z.n++
		return true
	}
	return z.again(v)
}

func (z *sizer) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid, reflect.Bool:
		z.n++ // null, true, false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Type() == durationType {
			z.n += 9
			return
		}
		z.int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := v.Uint(); u < 1<<30 {
			z.int(int64(u))
		} else {
			z.n += 9
		}
	case reflect.Float32, reflect.Float64:
		z.float(v.Float())
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		z.n += 3 + 2*varintLen(2) // an array of two
		z.float(real(c))
		z.float(imag(c))
	case reflect.String:
		z.str(v.Len())
	case reflect.Interface:
		if v.IsNil() {
			z.n++
			return
		}
		z.walk(v.Elem())
	case reflect.Pointer:
		if !z.nilOr(v) {
			z.walk(v.Elem())
		}
	case reflect.Map:
		if z.nilOr(v) {
			return
		}
		z.n += 2 + varintLen(uint64(v.Len())) // tags, key count
		for it := v.MapRange(); it.Next(); {
			z.walk(it.Key())
			z.walk(it.Value())
		}
	case reflect.Slice:
		if z.nilOr(v) {
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			z.str(v.Len()) // the ArrayBuffer
			z.n += 4 + varintLen(uint64(v.Len()))
			return
		}
		z.list(v)
	case reflect.Array:
		z.list(v)
	case reflect.Struct:
		z.object(v)
	default: // funcs and channels never reach storage
		z.n++
	}
}

// object counts a struct as an object of its fields, or a time as a Date.
func (z *sizer) object(v reflect.Value) {
	if v.Type() == timeType {
		z.n += 9
		return
	}
	t := v.Type()
	z.n += 2 + varintLen(uint64(t.NumField())) // tags, key count
	for i := range t.NumField() {
		z.str(len(t.Field(i).Name))
		z.walk(v.Field(i))
	}
}

// list counts a dense array of v's elements.
func (z *sizer) list(v reflect.Value) {
	n := uint64(v.Len())
	z.n += 1 + varintLen(n) + 2 + varintLen(n)
	for i := range v.Len() {
		z.walk(v.Index(i))
	}
}
