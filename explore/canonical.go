package explore

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dosim/dosim/stub"
)

// How the model and the observed run are compared: values in a canonical
// text (maps with sorted keys, as JSON), results and errors as keys.

// canonical renders v deterministically (maps with sorted keys): as
// json.Marshal does, or with %#v when it cannot. A value that shares its
// parts so much that written out whole it would pass maxCanonicalParts
// (storage keeps sharing, as the platform's structured clone does: sixty
// levels of pairs of one part are 2^60 parts written out) is written with
// each shared part once (sharedCanonical).
func canonical(v any) string {
	w := canonWalk{left: maxCanonicalParts}
	if b, ok := w.append(nil, v); ok {
		return string(b)
	}
	if w.left < 0 || partsOver(reflect.ValueOf(v), new(int)) {
		return sharedCanonical(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// maxCanonicalParts bounds the parts of a value canonical writes out whole.
const maxCanonicalParts = 1 << 20

// appendCanonical appends json.Marshal's bytes for v without its
// reflection over the whole value: nil, booleans, numbers, strings, blobs,
// and slices and string-keyed maps are written here, any other part (a
// struct) by json.Marshal alone, up to maxCanonicalParts parts; ok is
// false for a value json cannot write or one over the budget, which
// canonical handles.
func appendCanonical(b []byte, v any) (_ []byte, ok bool) {
	w := canonWalk{left: maxCanonicalParts}
	return w.append(b, v)
}

// canonWalk is appendCanonical's walk: left counts the parts it may
// still write.
type canonWalk struct{ left int }

func (w *canonWalk) append(b []byte, v any) (_ []byte, ok bool) {
	if w.left--; w.left < 0 {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case string:
		return appendJSONString(b, x), true
	case float64, float32, []byte, uint, uint8, uint16, uint32, uint64, int8, int16, int32:
		return appendJSON(b, x)
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = w.append(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		var keys [8]string
		ks := keys[:0]
		for k := range x {
			ks = append(ks, k)
		}
		slices.Sort(ks) // json.Marshal sorts a map's keys as they are, not as it writes them
		b = append(b, '{')
		for i, k := range ks {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			if b, ok = w.append(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	// Any other value (the struct an agent keeps for a task, say):
	// json.Marshal writes a value inside a map or a slice as it writes it
	// alone, so this part alone goes through its reflection, not the whole
	// (a booth seed spent 5% of its time marshalling whole storages). One
	// whose parts pass the budget is left to canonical.
	n := maxCanonicalParts - w.left
	if partsOver(reflect.ValueOf(v), &n) {
		w.left = -1
		return b, false
	}
	w.left = maxCanonicalParts - n
	return appendJSON(b, v)
}

// appendJSON appends json.Marshal's bytes for the leaf v (a string to
// escape, a float, a blob, a sized integer): json writes a value inside a
// slice or a map as it writes it alone. ok is false when json fails on it
// (NaN): canonical then fails on the whole value as json does.
func appendJSON(b []byte, v any) (_ []byte, ok bool) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, j...), true
}

// partsOver reports whether v, written out whole (a shared part each time
// it is met), has more than maxCanonicalParts parts; n counts them.
func partsOver(v reflect.Value, n *int) bool {
	if *n++; *n > maxCanonicalParts {
		return true
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && partsOver(v.Elem(), n)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		for i := range v.Len() {
			if partsOver(v.Index(i), n) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if partsOver(it.Value(), n) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if partsOver(v.Field(i), n) {
				return true
			}
		}
	}
	return false
}

// sharedCanonical writes v with each shared part (a map, a slice, a
// pointer's target) once, in full where it is first met and as @N, its
// number in that order, where it is met again: deterministic, and as
// long as the value's distinct parts.
func sharedCanonical(v any) string {
	w := sharedWalk{seen: map[sharedPart]int{}}
	w.write(reflect.ValueOf(v))
	return w.b.String()
}

type sharedPart struct {
	p   uintptr
	len int
	t   reflect.Type
}

type sharedWalk struct {
	b    strings.Builder
	seen map[sharedPart]int
}

// again reports whether the part at v was written before, writing its
// reference if so, and numbers it if not.
func (w *sharedWalk) again(v reflect.Value) bool {
	part := sharedPart{p: uintptr(v.UnsafePointer()), t: v.Type()}
	if v.Kind() == reflect.Slice {
		part.len = v.Len()
	}
	if n, ok := w.seen[part]; ok {
		fmt.Fprintf(&w.b, "@%d", n)
		return true
	}
	w.seen[part] = len(w.seen)
	return false
}

func (w *sharedWalk) write(v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid:
		w.b.WriteString("null")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			w.b.WriteString("null")
		} else if v.Kind() == reflect.Interface || !w.again(v) {
			w.write(v.Elem())
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		if v.Kind() != reflect.Array && (v.IsNil() || w.again(v)) {
			if v.IsNil() {
				w.b.WriteString("null")
			}
			return
		}
		w.writeMany(v)
	case reflect.Struct:
		w.b.WriteByte('{')
		for i := range v.NumField() {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.b.WriteString(v.Type().Field(i).Name + ":")
			w.write(v.Field(i))
		}
		w.b.WriteByte('}')
	case reflect.String:
		w.b.WriteString(strconv.Quote(v.String()))
	default:
		fmt.Fprintf(&w.b, "%v", v)
	}
}

// writeMany writes a slice's or array's elements, or a map's entries by
// the order of their keys written out.
func (w *sharedWalk) writeMany(v reflect.Value) {
	if v.Kind() != reflect.Map {
		if v.Type().Elem().Kind() == reflect.Uint8 && v.Kind() == reflect.Slice {
			fmt.Fprintf(&w.b, "%q", v.Bytes())
			return
		}
		w.b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.write(v.Index(i))
		}
		w.b.WriteByte(']')
		return
	}
	keys := v.MapKeys()
	text := make([]string, len(keys))
	for i, k := range keys {
		text[i] = fmt.Sprint(k)
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(text[a], text[b]) })
	w.b.WriteByte('{')
	for n, i := range order {
		if n > 0 {
			w.b.WriteByte(',')
		}
		w.b.WriteString(strconv.Quote(text[i]) + ":")
		w.write(v.MapIndex(keys[i]))
	}
	w.b.WriteByte('}')
}

// appendJSONString appends s as json.Marshal writes a string: quoted,
// with HTML's <, > and & escaped, control bytes as \n or \u00XX, bytes
// that are not UTF-8 as \ufffd, and U+2028 and U+2029 escaped. An SQL
// table's schema text has newlines and tabs, and json.Marshal of each
// such string was a third of a booth state's canonical text
// (TestD1_CanonicalStringsAreJSONs and FuzzCanonicalString hold it
// against json.Marshal).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++ // DEL (0x7f) too, as json.Marshal leaves it
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func fetchKey(status int, body string) string { return fmt.Sprintf("ok %d %q", status, body) }

// resultKey renders what a call returned: its value, or the object's own
// error text (without the attempt it came from).
func resultKey(v any, err error) string {
	if err == nil {
		var buf [64]byte
		if b, ok := appendCanonical(append(buf[:0], "ok "...), v); ok {
			return string(b)
		}
		return "ok " + canonical(v)
	}
	var e *stub.Error
	if errors.As(err, &e) {
		return "err " + e.Msg
	}
	return "err " + err.Error()
}
