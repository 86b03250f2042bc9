package stub

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/internal/untyped"
)

// addSeeds adds the nasty cases to a fuzz corpus of untyped maps.
func addSeeds(f *testing.F, keys ...string) {
	for _, js := range []string{
		`{}`, ``, `null`, `[]`, `"x"`, `{"maxRetries": 3, "timeoutMs": 2000}`,
		`{"maxRetries": 1e308, "timeoutMs": -1}`, `{"maxRetries": 18446744073709551616}`,
		`{"timeoutMs": 500.5}`, `{"timeoutMs": "1000"}`, `{"maxRetries": {"a": {"b": 1}}}`,
		`{"maxRetries": [1]}`, `{"maxRetries": null}`, `{"maxRetries": true}`, `{"": 1}`,
		`{"TZ=UTC": 1}`, `{"CRON_TZ=": 1}`, `{"maxAttempts": 3, "baseDelayMs": 100, "maxDelayMs": 1000}`,
		`{"maxAttempts": 1e400}`, `{"baseDelayMs": 0.5}`, `{"maxDelayMs": -0}`, `{"ünïcödé": "名前"}`,
	} {
		for _, useNumber := range []bool{false, true} {
			f.Add([]byte(js), useNumber, "", uint8(0), int64(0), 0.0, "")
		}
	}
	values := []struct {
		n int64
		x float64
		s string
	}{
		{0, 0, ""}, {1, 1, "1"}, {-1, -1, "-1"}, {3, 3.5, "3.5"}, {500, 500, "500"},
		{60000, 60000, "60000"}, {math.MaxInt64, math.NaN(), "NaN"}, {math.MinInt64, math.Inf(1), "1e400"},
		{1 << 53, math.Inf(-1), "-Inf"}, {10, 1e308, "0x10"}, {11, math.SmallestNonzeroFloat64, "ünïcödé"},
	}
	// Every kind of value under the first key; the numbers under the others.
	for kind := range uint8(20) {
		for _, v := range values {
			f.Add([]byte(`{}`), false, keys[0], kind, v.n, v.x, v.s)
		}
	}
	for _, k := range keys[1:] {
		for _, kind := range []uint8{1, 12, 13} {
			for _, v := range values {
				f.Add([]byte(`{}`), false, k, kind, v.n, v.x, v.s)
			}
		}
	}
	for _, k := range []string{"", "TZ=UTC", "CRON_TZ=", "unknown", "ünïcödé"} {
		f.Add([]byte(`{}`), false, k, uint8(1), int64(1), 1.0, "1")
	}
}

// anyNumber returns v as a float64 when it is a number as ParseOptions
// documents it: a value of any Go integer or float kind (named ones too,
// such as time.Duration), or a json.Number. (Until issue 10 ParseOptions
// refused json.Number and named types while object.ParseRetryOptions took
// them; both now read numbers with internal/clone.Number.)
func anyNumber(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return f, err == nil
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

// FuzzParseOptions (rule S2): no untyped input makes ParseOptions panic;
// it returns an error exactly when some key is unknown or some value is
// not a whole number within the key's range, of a Go number kind or a
// json.Number (a string, a bool, null, a map or a list is not); the error
// names a key and says what is wrong; otherwise the options set exactly
// the values given, all within range.
func FuzzParseOptions(f *testing.F) {
	addSeeds(f, "maxRetries", "timeoutMs")
	limits := map[string][2]int{"maxRetries": {MinMaxRetries, MaxMaxRetries}, "timeoutMs": {MinTimeoutMs, MaxTimeoutMs}}
	f.Fuzz(func(t *testing.T, js []byte, useNumber bool, key string, kind uint8, n int64, x float64, s string) {
		m := untyped.Map(js, useNumber, key, kind, n, x, s)
		valid := true
		for k, v := range m {
			lim, known := limits[k]
			num, isNum := anyNumber(v)
			if !known || !isNum || math.IsNaN(num) || math.IsInf(num, 0) || num != math.Trunc(num) || num < float64(lim[0]) || num > float64(lim[1]) {
				valid = false
			}
		}
		opts, err := ParseOptions(m)
		if err != nil {
			if valid {
				t.Fatalf("ParseOptions(%#v) refused valid options: %v", m, err)
			}
			if opts != nil {
				t.Fatalf("ParseOptions(%#v): options %v and error %v", m, opts, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "stub option ") || strings.Contains(msg, "\n") {
				t.Fatalf("error not one line starting with the field: %q", msg)
			}
			named := false
			for k := range m {
				named = named || strings.HasPrefix(msg, "stub option "+k+":") || strings.HasPrefix(msg, "stub option "+strconv.Quote(k)+":")
			}
			known := errors.Is(err, ErrType) || errors.Is(err, ErrRange) || strings.Contains(msg, "unknown; allowed are maxRetries, timeoutMs")
			if !named || !known {
				t.Fatalf("error does not name a key of %#v or say what is allowed: %q", m, msg)
			}
			return
		}
		if !valid {
			t.Fatalf("ParseOptions(%#v) accepted invalid options", m)
		}
		if len(opts) != len(m) {
			t.Fatalf("ParseOptions(%#v) made %d options", m, len(opts))
		}
		c := defaults()
		for _, o := range opts {
			if err := o.apply(&c); err != nil {
				t.Fatalf("an option ParseOptions made fails to apply: %v", err)
			}
		}
		want := defaults()
		if v, ok := m["maxRetries"]; ok {
			num, _ := anyNumber(v)
			want.maxRetries = int(num)
		}
		if v, ok := m["timeoutMs"]; ok {
			num, _ := anyNumber(v)
			want.timeout = time.Duration(num) * time.Millisecond
		}
		if c != want {
			t.Fatalf("ParseOptions(%#v) set %+v, want %+v", m, c, want)
		}
		if c.maxRetries < MinMaxRetries || c.maxRetries > MaxMaxRetries || c.timeout < MinTimeoutMs*time.Millisecond || c.timeout > MaxTimeoutMs*time.Millisecond {
			t.Fatalf("options out of range: %+v", c)
		}
	})
}
