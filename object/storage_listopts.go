package object

import (
	"fmt"
	"math"
	"reflect"
	"slices"
)

// The platform's words for List options it refuses (TypeError there).
const (
	msgLimit              = "List limit must be positive."
	msgStartAndStartAfter = "list() cannot be called with both start and startAfter values."
)

// listOptionKeys are the keys ParseListOptions takes, the platform's names.
var listOptionKeys = []string{"prefix", "start", "startAfter", "end", "reverse", "limit"}

// ParseListOptions reads List options given as untyped data, as a
// scenario's YAML or a JavaScript caller writes them: a map with the
// platform's keys prefix, start, startAfter, end (strings), reverse (a
// bool) and limit (a whole number). A missing or nil key is not set. As on
// the platform, a limit that is given must be positive (0 or below is
// refused with "List limit must be positive.", where ListOptions' zero
// Limit means no limit), and start and startAfter are not both given
// ("list() cannot be called with both start and startAfter values."). An
// explicit empty startAfter selects every key but the empty one. Any other
// key, or a value of the wrong type, is refused too. Every error wraps
// ErrStorage.
func ParseListOptions(m map[string]any) (ListOptions, error) {
	var o ListOptions
	for k := range m {
		if !slices.Contains(listOptionKeys, k) {
			return ListOptions{}, fmt.Errorf("%w: List: unknown option %q (known: %v)", ErrStorage, k, listOptionKeys)
		}
	}
	given := func(k string) bool { return m[k] != nil }
	if given("start") && given("startAfter") {
		return ListOptions{}, fmt.Errorf("%w: List: %s", ErrStorage, msgStartAndStartAfter)
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"prefix", &o.Prefix}, {"start", &o.Start}, {"startAfter", &o.StartAfter}, {"end", &o.End}} {
		if !given(f.key) {
			continue
		}
		s, ok := m[f.key].(string)
		if !ok {
			return ListOptions{}, wrongType(f.key, m[f.key], "a string")
		}
		*f.dst = s
	}
	if given("startAfter") && o.StartAfter == "" {
		o.Start = "\x00" // every key after the empty one
	}
	if given("reverse") {
		b, ok := m["reverse"].(bool)
		if !ok {
			return ListOptions{}, wrongType("reverse", m["reverse"], "a bool")
		}
		o.Reverse = b
	}
	if given("limit") {
		n, ok := wholeNumber(m["limit"])
		if !ok {
			return ListOptions{}, wrongType("limit", m["limit"], "a whole number")
		}
		if n <= 0 {
			return ListOptions{}, fmt.Errorf("%w: List: %s", ErrStorage, msgLimit)
		}
		o.Limit = int(min(n, math.MaxInt32))
	}
	return o, nil
}

// wrongType is the error for option key given v, not of the type want.
func wrongType(key string, v any, want string) error {
	return fmt.Errorf("%w: List: option %s is %T, must be %s", ErrStorage, key, v, want)
}

// wholeNumber returns v as an int64 when it is a number with no fraction.
func wholeNumber(v any) (int64, bool) {
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return r.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(min(r.Uint(), math.MaxInt64)), true
	case reflect.Float32, reflect.Float64:
		f := r.Float()
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return 0, false
		}
		return int64(max(min(f, math.MaxInt64), math.MinInt64)), true
	}
	return 0, false
}
