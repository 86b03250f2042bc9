package explore

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/dosim/dosim/stub"
)

// How the model and the observed run are compared: values in a canonical
// text (maps with sorted keys, as JSON), results and errors as keys.

// canonical renders v deterministically (maps with sorted keys): as
// json.Marshal does, or with %#v when it cannot.
func canonical(v any) string {
	if b, ok := appendCanonical(nil, v); ok {
		return string(b)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// appendCanonical appends json.Marshal's bytes for the values every seed
// meets (nil, booleans, integers, plain strings, and slices and
// string-keyed maps of them) without its reflection; ok is false for any
// other value, which canonical leaves to json.Marshal.
func appendCanonical(b []byte, v any) (_ []byte, ok bool) {
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
		if !plainJSON(x) {
			return b, false
		}
		b = append(b, '"')
		b = append(b, x...)
		return append(b, '"'), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendCanonical(b, e); !ok {
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
			if !plainJSON(k) {
				return b, false
			}
			ks = append(ks, k)
		}
		slices.Sort(ks)
		b = append(b, '{')
		for i, k := range ks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, '"', ':')
			if b, ok = appendCanonical(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// plainJSON reports whether json.Marshal writes s as itself in quotes:
// printable ASCII, with none of the characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
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
