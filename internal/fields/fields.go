// Package fields writes what an object instance keeps in memory as text:
// the values of its fields, read by reflection, so that two instances
// whose texts are equal behave alike (rule C2: the model keeps what the
// instance keeps, and verify compares it).
//
// The text is deterministic: maps are written with their entries sorted,
// pointers shared within the value are written once and then referred to
// by number, and a time.Time is its instant. What is not the instance's
// own memory is left out: funcs and channels (which no run can compare),
// and any value of a type of dosim's engine (package object, runtime,
// stub, agent, transport or internal/...: the instance's *object.State, a
// *runtime.Namespace binding, a stub, the embedded agent.Agent, whose task
// index mirrors storage). A value with nothing left to write, such as a
// struct that holds only its State, is the empty text: the instance keeps
// nothing a fresh one lacks.
package fields

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// MaxText is the longest text Text writes out whole: a longer one keeps
// its first bytes and ends with a digest of the whole, so that two texts
// are equal only when the values are.
const MaxText = 64 << 10

// dosimPrefix is the import path prefix of dosim's packages.
const dosimPrefix = "github.com/dosim/dosim/"

// engine are dosim's packages whose types an instance holds as the
// runtime's (its State, its bindings, stubs, the embedded Agent), beside
// internal/...: a class of the examples, or of a test package, is a
// user's.
var engine = map[string]bool{
	dosimPrefix + "object": true, dosimPrefix + "runtime": true, dosimPrefix + "stub": true,
	dosimPrefix + "stub/typed": true, dosimPrefix + "agent": true, dosimPrefix + "transport": true,
}

// engineType reports whether a type of package path p is dosim's engine's.
func engineType(p string) bool {
	if engine[p] {
		return true
	}
	rest, ok := strings.CutPrefix(p, dosimPrefix+"internal/")
	return ok && !strings.HasSuffix(rest, "_test")
}

// Text returns the fields of v as text (see the package doc): "" when v
// keeps nothing.
func Text(v any) string {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() && nothing(rv.Type().Elem()) {
		return "" // an instance of a class that keeps nothing (most do)
	}
	w := walker{seen: map[ptrKey]int{}}
	w.value(reflect.ValueOf(v), 0)
	s := string(w.b)
	if len(s) > MaxText {
		sum := sha256.Sum256([]byte(s))
		s = s[:1024] + "… sha256:" + hex.EncodeToString(sum[:])
	}
	return s
}

// Empty reports whether Text(v) is "": from v's type alone when it
// decides (a class that keeps nothing, or a field that always writes
// something), else by writing it.
func Empty(v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		switch t := rv.Type().Elem(); {
		case nothing(t):
			return true
		case always(t):
			return false
		}
	}
	return Text(v) == ""
}

// alwaysWrites caches always's answers, by type.
var alwaysWrites sync.Map // reflect.Type -> bool

// always reports whether every value of struct type t writes something:
// one of its fields is of a type whose every value does (a number, a
// string, a bool, a time; a slice or a map, which writes nil when nil).
func always(t reflect.Type) bool {
	if v, ok := alwaysWrites.Load(t); ok {
		return v.(bool)
	}
	ok := false
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "_" || skipped(f.Type) {
				continue
			}
			switch f.Type.Kind() {
			case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
				reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String,
				reflect.Slice, reflect.Map, reflect.Array:
				ok = true
			case reflect.Struct:
				ok = always(f.Type)
			}
			if ok {
				break
			}
		}
	}
	alwaysWrites.Store(t, ok)
	return ok
}

// nothings caches nothing's answers, by type.
var nothings sync.Map // reflect.Type -> bool

// nothing reports whether every value of type t writes nothing: a skipped
// type, or a struct whose fields are all such (a class that holds only
// its State, its bindings and funcs).
func nothing(t reflect.Type) bool {
	if v, ok := nothings.Load(t); ok {
		return v.(bool)
	}
	ok := skipped(t)
	if !ok && t.Kind() == reflect.Struct {
		ok = true
		for i := range t.NumField() {
			if f := t.Field(i); f.Name != "_" && (f.Type == t || !nothing(f.Type)) {
				ok = false
				break
			}
		}
	}
	nothings.Store(t, ok)
	return ok
}

// ptrKey names a pointer the walk has met: its address and type.
type ptrKey struct {
	addr uintptr
	typ  reflect.Type
}

// maxDepth bounds the walk's nesting: deeper values are written as "…".
const maxDepth = 64

type walker struct {
	b    []byte
	seen map[ptrKey]int
}

func (w *walker) str(s string) { w.b = append(w.b, s...) }
func (w *walker) byte1(c byte) { w.b = append(w.b, c) }

// skipped reports whether values of type t are not the instance's own
// memory: funcs, channels, unsafe pointers and dosim's own types.
func skipped(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		if t.Name() == "" {
			if t.Kind() == reflect.Map && skipped(t.Key()) {
				return true
			}
			return skipped(t.Elem())
		}
	}
	return engineType(t.PkgPath())
}

// value writes v; it writes nothing for a value with nothing to write (a
// skipped type, a struct whose fields are all skipped) and reports
// whether it wrote.
func (w *walker) value(v reflect.Value, depth int) bool {
	if !v.IsValid() {
		w.str("nil")
		return true
	}
	t := v.Type()
	if skipped(t) {
		return false
	}
	if depth > maxDepth {
		w.str("…")
		return true
	}
	if t == timeType {
		if tm, ok := timeOf(v); ok {
			w.str(tm.UTC().Format(time.RFC3339Nano))
			return true
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		w.str(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.str(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.str(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		w.float(v.Float())
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		w.byte1('(')
		w.float(real(c))
		w.byte1(',')
		w.float(imag(c))
		w.byte1(')')
	case reflect.String:
		w.str(strconv.Quote(v.String()))
	case reflect.Interface:
		return w.iface(v, depth)
	case reflect.Pointer:
		return w.pointer(v, depth)
	case reflect.Struct:
		return w.structure(v, depth)
	case reflect.Slice, reflect.Array:
		w.list(v, depth)
	case reflect.Map:
		w.mapping(v, depth)
	default:
		return false
	}
	return true
}

var timeType = reflect.TypeFor[time.Time]()

// timeOf reads a time.Time value, also one in an unexported field: ok is
// false only for such a field's copy that is not addressable (the walk
// then writes its fields).
func timeOf(v reflect.Value) (time.Time, bool) {
	switch {
	case v.CanInterface():
		return v.Interface().(time.Time), true
	case v.CanAddr():
		// An unexported field's value cannot be taken by Interface; its
		// address can (reading only).
		return *(*time.Time)(unsafe.Pointer(v.UnsafeAddr())), true
	}
	return time.Time{}, false
}

func (w *walker) float(f float64) {
	switch {
	case math.IsNaN(f):
		w.str("NaN")
	default:
		w.str(strconv.FormatFloat(f, 'g', -1, 64))
	}
}

// iface writes an interface's dynamic value, with its type.
func (w *walker) iface(v reflect.Value, depth int) bool {
	if v.IsNil() {
		w.str("nil")
		return true
	}
	e := v.Elem()
	if skipped(e.Type()) {
		return false
	}
	mark := len(w.b)
	w.str(e.Type().String())
	w.byte1('(')
	if !w.value(e, depth+1) {
		w.truncate(mark)
		return false
	}
	w.byte1(')')
	return true
}

// pointer writes what v points to, once: a pointer met again is written
// as a reference to the first.
func (w *walker) pointer(v reflect.Value, depth int) bool {
	if v.IsNil() {
		w.str("nil")
		return true
	}
	k := ptrKey{v.Pointer(), v.Type()}
	if n, ok := w.seen[k]; ok {
		w.str("&" + strconv.Itoa(n))
		return true
	}
	w.seen[k] = len(w.seen) + 1
	mark := len(w.b)
	w.byte1('&')
	if !w.value(v.Elem(), depth+1) {
		w.truncate(mark)
		return false
	}
	return true
}

// structure writes a struct's fields that have something to write, by
// name: nothing when none has.
func (w *walker) structure(v reflect.Value, depth int) bool {
	t := v.Type()
	mark := len(w.b)
	w.byte1('{')
	wrote := false
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "_" {
			continue
		}
		at := len(w.b)
		if wrote {
			w.byte1(' ')
		}
		w.str(f.Name)
		w.byte1(':')
		if w.value(v.Field(i), depth+1) {
			wrote = true
			continue
		}
		w.truncate(at)
	}
	if !wrote {
		w.truncate(mark)
		return false
	}
	w.byte1('}')
	return true
}

// list writes a slice's or an array's elements ([]byte as a string).
func (w *walker) list(v reflect.Value, depth int) {
	if v.Kind() == reflect.Slice && v.IsNil() {
		w.str("nil")
		return
	}
	if v.Type().Elem().Kind() == reflect.Uint8 && v.Kind() == reflect.Slice {
		w.str(strconv.Quote(string(v.Bytes())))
		return
	}
	w.byte1('[')
	for i := range v.Len() {
		if i > 0 {
			w.byte1(' ')
		}
		if !w.value(v.Index(i), depth+1) {
			w.str("_")
		}
	}
	w.byte1(']')
}

// mapping writes a map's entries sorted by their text.
func (w *walker) mapping(v reflect.Value, depth int) {
	if v.IsNil() {
		w.str("nil")
		return
	}
	type entry struct{ k, v string }
	entries := make([]entry, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		// Each entry is written by a walk of its own, from the pointers
		// met before the map, so that its text does not depend on the
		// order the map hands its entries out in: a pointer two entries
		// share is written out in each.
		kw := walker{seen: cloneSeen(w.seen)}
		if !kw.value(it.Key(), depth+1) {
			kw.str("_")
		}
		vw := walker{seen: cloneSeen(w.seen)}
		if !vw.value(it.Value(), depth+1) {
			vw.str("_")
		}
		entries = append(entries, entry{string(kw.b), string(vw.b)})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	w.str("map[")
	for i, e := range entries {
		if i > 0 {
			w.byte1(' ')
		}
		w.str(e.k)
		w.byte1(':')
		w.str(e.v)
	}
	w.byte1(']')
}

// cloneSeen copies the pointers met so far, for a walk of a map entry.
func cloneSeen(m map[ptrKey]int) map[ptrKey]int {
	out := make(map[ptrKey]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// truncate drops what the walk wrote after mark.
func (w *walker) truncate(mark int) { w.b = w.b[:mark] }
