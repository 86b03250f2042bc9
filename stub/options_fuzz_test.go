package stub

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/internal/untyped"
)

// addSeeds adds the nasty cases to a fuzz corpus of untyped maps.
func addSeeds(f *testing.F, keys ...string) {
	docs := []string{
		`{}`, ``, `null`, `[]`, `"x"`, `{"maxRetries": 3, "timeoutMs": 2000}`,
		`{"maxRetries": 1e308, "timeoutMs": -1}`, `{"maxRetries": 18446744073709551616}`,
		`{"timeoutMs": 500.5}`, `{"timeoutMs": "1000"}`, `{"maxRetries": {"a": {"b": 1}}}`,
		`{"maxRetries": [1]}`, `{"maxRetries": null}`, `{"maxRetries": true}`, `{"": 1}`,
		`{"TZ=UTC": 1}`, `{"CRON_TZ=": 1}`, `{"maxAttempts": 3, "baseDelayMs": 100, "maxDelayMs": 1000}`,
		`{"maxAttempts": 1e400}`, `{"baseDelayMs": 0.5}`, `{"maxDelayMs": -0}`, `{"ünïcödé": "名前"}`,
	}
	values := []untyped.Value{
		{N: 0, X: 0, S: ""}, {N: 1, X: 1, S: "1"}, {N: -1, X: -1, S: "-1"}, {N: 3, X: 3.5, S: "3.5"}, {N: 500, X: 500, S: "500"},
		{N: 60000, X: 60000, S: "60000"}, {N: math.MaxInt64, X: math.NaN(), S: "NaN"}, {N: math.MinInt64, X: math.Inf(1), S: "1e400"},
		{N: 1 << 53, X: math.Inf(-1), S: "-Inf"}, {N: 10, X: 1e308, S: "0x10"}, {N: 11, X: math.SmallestNonzeroFloat64, S: "ünïcödé"},
	}
	for _, in := range untyped.Corpus(docs, values, keys...) {
		f.Add(in.JS, in.UseNumber, in.Key, in.Kind, in.N, in.X, in.S)
	}
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
			num, isNum := untyped.Number(v)
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
				named = named || strings.HasPrefix(msg, "stub option "+k+":") || strings.HasPrefix(msg, "stub option "+strconv.Quote(k)+":") ||
					strings.HasPrefix(msg, "stub option "+quote.Q(k)+":")
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
			num, _ := untyped.Number(v)
			want.maxRetries = int(num)
		}
		if v, ok := m["timeoutMs"]; ok {
			num, _ := untyped.Number(v)
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
