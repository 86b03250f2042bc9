package object

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// Storage limits (rule L8), the platform's: an operation that breaks one
// fails with an error wrapping ErrStorage and changes nothing.
const (
	// MaxKeyBytes is the longest key, in bytes.
	MaxKeyBytes = 2048
	// MaxValueBytes is the largest value, in bytes serialised. A value's
	// serialised size is the length of its JSON encoding, with three
	// simplifications that keep it cheap and defined for every value
	// Storage accepts: strings count their bytes plus two quotes (escapes
	// are not counted); struct fields count under their Go names (exported
	// fields only, as JSON writes them); and a pointer, map or slice met a
	// second time in the same value counts 4 bytes, as a back-reference in
	// the platform's serialiser does, so shared parts count once (a value
	// that contains itself is refused before it is measured: rule O5).
	// Byte slices count as base64, times as RFC 3339 strings, numbers as
	// their shortest decimal form.
	MaxValueBytes = 128 << 10
	// MaxKeysPerCall is the most keys one GetMany, PutMany or DeleteMany
	// may name.
	MaxKeysPerCall = 128
)

var timeType = reflect.TypeFor[time.Time]()

// checkSize refuses a value (already copied) larger than MaxValueBytes
// serialised. Numbers, bools, times and short strings are never too
// large, so the common small value is not measured at all.
func checkSize(op, key string, v any) error {
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64,
		float32, float64, time.Duration, time.Time:
		return nil
	case string:
		if len(x)+2 <= MaxValueBytes {
			return nil
		}
	}
	if n := serialisedSize(v); n > MaxValueBytes {
		return fmt.Errorf("%w: %s %s: value is %d bytes serialised, at most %d allowed", ErrStorage, op, shortKey(key), n, MaxValueBytes)
	}
	return nil
}

// serialisedSize returns v's size as MaxValueBytes defines it. It walks
// the value once, as the copy into storage did.
func serialisedSize(v any) int {
	z := sizer{}
	z.walk(reflect.ValueOf(v))
	return z.n
}

type sizer struct {
	n    int
	seen map[seenKey]bool
	buf  [40]byte
}

type seenKey struct {
	ptr uintptr
	len int
	typ reflect.Type
}

// again reports whether the pointer, map or slice v was met before, and
// marks it met.
func (z *sizer) again(v reflect.Value) bool {
	k := seenKey{ptr: v.Pointer(), typ: v.Type()}
	if v.Kind() == reflect.Slice {
		k.len = v.Len()
	}
	if z.seen == nil {
		z.seen = map[seenKey]bool{}
	}
	if z.seen[k] {
		return true
	}
	z.seen[k] = true
	return false
}

func (z *sizer) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid:
		z.n += 4 // null
	case reflect.Bool:
		z.n += 5 - btoi(v.Bool()) // true, false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		z.n += len(strconv.AppendInt(z.buf[:0], v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		z.n += len(strconv.AppendUint(z.buf[:0], v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		z.n += len(strconv.AppendFloat(z.buf[:0], v.Float(), 'g', -1, 64))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		z.n += 3 + len(strconv.AppendFloat(z.buf[:0], real(c), 'g', -1, 64)) +
			len(strconv.AppendFloat(z.buf[:0], imag(c), 'g', -1, 64))
	case reflect.String:
		z.n += v.Len() + 2
	case reflect.Interface:
		if v.IsNil() {
			z.n += 4
			return
		}
		z.walk(v.Elem())
	case reflect.Pointer:
		if v.IsNil() || z.again(v) {
			z.n += 4
			return
		}
		z.walk(v.Elem())
	case reflect.Map:
		if v.IsNil() || z.again(v) {
			z.n += 4
			return
		}
		z.n += 2 + max(v.Len()-1, 0) // braces, commas
		for it := v.MapRange(); it.Next(); {
			z.key(it.Key())
			z.n++ // colon
			z.walk(it.Value())
		}
	case reflect.Slice:
		if v.IsNil() || z.again(v) {
			z.n += 4
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			z.n += base64.StdEncoding.EncodedLen(v.Len()) + 2
			return
		}
		z.list(v)
	case reflect.Array:
		z.list(v)
	case reflect.Struct:
		if v.Type() == timeType {
			t := v.Interface().(time.Time)
			z.n += len(t.AppendFormat(z.buf[:0], time.RFC3339Nano)) + 2
			return
		}
		t := v.Type()
		z.n += 2 // braces
		fields := 0
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fields++
			z.n += len(f.Name) + 3 // "name":
			z.walk(v.Field(i))
		}
		z.n += max(fields-1, 0) // commas
	default: // funcs and channels never reach storage
		z.n += 4
	}
}

// list counts a JSON array of v's elements.
func (z *sizer) list(v reflect.Value) {
	z.n += 2 + max(v.Len()-1, 0)
	for i := range v.Len() {
		z.walk(v.Index(i))
	}
}

// key counts a map key as JSON writes it: a string, quoted.
func (z *sizer) key(k reflect.Value) {
	switch k.Kind() {
	case reflect.String:
		z.n += k.Len() + 2
	case reflect.Interface:
		if k.IsNil() {
			z.n += 6
			return
		}
		z.key(k.Elem())
	default:
		z.walk(k)
		z.n += 2 // quotes around a number or bool
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
