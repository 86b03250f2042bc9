package render

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/clone"
)

// The bounds within which Value renders a value as encoding/json (or fmt)
// does. The runtime copies only plain data with no cycle into its records
// and storage (rule O5), but a report may be built by hand, and a value
// that shares its parts many times over renders far larger than it is:
// past a bound, Value writes what it can within its own bounds instead of
// recursing forever or exhausting memory.
const (
	// maxValueDepth is how many pointers, slices, arrays, maps and
	// structs deep a rendered value goes; deeper parts read "...".
	maxValueDepth = 100
	// maxValueNodes is how many parts a value may have, a shared part
	// counted each time it is met, for encoding/json to render it.
	maxValueNodes = 100_000
	// maxValueText is how long the text of a value outside those bounds
	// grows before it is cut.
	maxValueText = 64 << 10
)

// tame reports whether v is within the bounds encoding/json and fmt need:
// no cycle, nested at most maxValueDepth deep, at most maxValueNodes parts.
func tame(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int64, uint64, float64, time.Duration, time.Time:
		return true
	}
	t := tamer{}
	return t.walk(reflect.ValueOf(v), 0)
}

var timeType = reflect.TypeFor[time.Time]()

// ref identifies a pointer, map or slice.
type ref struct {
	ptr uintptr
	len int
	typ reflect.Type
}

// refOf returns v's identity, if v is a non-nil pointer, map or slice.
func refOf(v reflect.Value) (ref, bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map:
		return ref{ptr: v.Pointer(), typ: v.Type()}, !v.IsNil()
	case reflect.Slice:
		return ref{ptr: v.Pointer(), len: v.Len(), typ: v.Type()}, !v.IsNil()
	}
	return ref{}, false
}

type tamer struct {
	open  map[ref]bool // the pointers, maps and slices being walked
	nodes int
}

func (t *tamer) walk(v reflect.Value, depth int) bool {
	t.nodes++
	if depth > maxValueDepth || t.nodes > maxValueNodes {
		return false
	}
	if r, ok := refOf(v); ok {
		if t.open[r] {
			return false
		}
		if t.open == nil {
			t.open = map[ref]bool{}
		}
		t.open[r] = true
		defer delete(t.open, r)
	}
	switch v.Kind() {
	case reflect.Interface: // as transparent as in JSON: no level of its own
		return v.IsNil() || t.walk(v.Elem(), depth)
	case reflect.Pointer:
		return v.IsNil() || t.walk(v.Elem(), depth+1)
	case reflect.Slice, reflect.Array:
		if clone.PlainKind(v.Type().Elem().Kind()) {
			return true
		}
		for i := range v.Len() {
			if !t.walk(v.Index(i), depth+1) {
				return false
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if !t.walk(it.Key(), depth+1) || !t.walk(it.Value(), depth+1) {
				return false
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if !t.walk(v.Field(i), depth+1) {
				return false
			}
		}
	}
	return true
}

// wild writes a value outside tame's bounds in a JSON-like text: a cycle
// reads "<cycle>", a part past maxValueDepth "...", and the text stops
// at maxValueText. Maps are written in the order of their keys' text, so
// that the same value gives the same text (rule D1); structs show their
// exported fields.
func wild(v any) string {
	w := wildWriter{open: map[ref]bool{}}
	w.write(reflect.ValueOf(v), 0)
	if w.b.Len() > maxValueText {
		return w.b.String()[:maxValueText] + "...(cut)"
	}
	return w.b.String()
}

type wildWriter struct {
	b    strings.Builder
	open map[ref]bool
}

func (w *wildWriter) write(v reflect.Value, depth int) {
	switch {
	case w.b.Len() > maxValueText:
		return
	case !v.IsValid():
		w.b.WriteString("null")
		return
	case depth > maxValueDepth:
		w.b.WriteString("...")
		return
	}
	if r, ok := refOf(v); ok {
		if w.open[r] {
			w.b.WriteString(`"<cycle>"`)
			return
		}
		w.open[r] = true
		defer delete(w.open, r)
	}
	w.writeKind(v, depth)
}

func (w *wildWriter) writeKind(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			w.b.WriteString("null")
			return
		}
		if v.Kind() == reflect.Interface {
			depth-- // as transparent as in JSON: no level of its own
		}
		w.write(v.Elem(), depth+1)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			w.b.WriteString("null")
			return
		}
		w.b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.write(v.Index(i), depth+1)
		}
		w.b.WriteByte(']')
	case reflect.Map:
		w.writeMap(v, depth)
	case reflect.Struct:
		w.writeStruct(v, depth)
	case reflect.String:
		w.b.WriteString(strconv.Quote(v.String()))
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		w.b.WriteString(strconv.Quote("<" + v.Type().String() + ">"))
	default:
		fmt.Fprint(&w.b, v)
	}
}

func (w *wildWriter) writeMap(v reflect.Value, depth int) {
	if v.IsNil() {
		w.b.WriteString("null")
		return
	}
	type entry struct {
		key string
		val reflect.Value
	}
	var es []entry
	it := v.MapRange()
	for it.Next() {
		var k wildWriter
		k.open = w.open
		k.write(it.Key(), depth+1)
		es = append(es, entry{k.b.String(), it.Value()})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].key < es[j].key })
	w.b.WriteByte('{')
	for i, e := range es {
		if i > 0 {
			w.b.WriteByte(',')
		}
		w.b.WriteString(e.key)
		w.b.WriteByte(':')
		w.write(e.val, depth+1)
	}
	w.b.WriteByte('}')
}

func (w *wildWriter) writeStruct(v reflect.Value, depth int) {
	if v.Type() == timeType && v.CanInterface() {
		b, _ := json.Marshal(v.Interface())
		w.b.Write(b)
		return
	}
	w.b.WriteByte('{')
	n := 0
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if n > 0 {
			w.b.WriteByte(',')
		}
		n++
		w.b.WriteString(strconv.Quote(f.Name))
		w.b.WriteByte(':')
		w.write(v.Field(i), depth+1)
	}
	w.b.WriteByte('}')
}
