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
		`{"retry": {"maxRetries": 3, "timeoutMs": 2000}}`, `{"retry": {"maxRetries": 11}}`, `{"retry": {}}`,
		`{"retry": {"timeoutMs": "1000"}}`, `{"retry": {"retries": 1}}`, `{"retry": 3}`, `{"retry": null}`,
		`{"retry": {"maxRetries": 1}, "timeoutMs": 1000}`, `{"retry": {}, "x": 1}`,
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
// it returns an error exactly when some key is unknown, some value is not
// a whole number within the key's range, of a Go number kind or a
// json.Number (a string, a bool, null, a map or a list is not), or the
// platform's form (retry: a mapping of the same keys) is given with the
// flat one or is not a mapping; the error names a key and says what is
// wrong; otherwise the options set exactly the values given, all within
// range.
func FuzzParseOptions(f *testing.F) {
	addSeeds(f, "maxRetries", "timeoutMs", "retry")
	f.Fuzz(func(t *testing.T, js []byte, useNumber bool, key string, kind uint8, n int64, x float64, s string) {
		m := untyped.Map(js, useNumber, key, kind, n, x, s)
		fields, valid := optionFields(m)
		opts, err := ParseOptions(m)
		if err != nil {
			if valid {
				t.Fatalf("ParseOptions(%#v) refused valid options: %v", m, err)
			}
			if opts != nil {
				t.Fatalf("ParseOptions(%#v): options %v and error %v", m, opts, err)
			}
			checkOptionError(t, m, err)
			return
		}
		if !valid {
			t.Fatalf("ParseOptions(%#v) accepted invalid options", m)
		}
		if len(opts) != len(fields) {
			t.Fatalf("ParseOptions(%#v) made %d options", m, len(opts))
		}
		c := defaults()
		for _, o := range opts {
			if err := o.apply(&c); err != nil {
				t.Fatalf("an option ParseOptions made fails to apply: %v", err)
			}
		}
		want := defaults()
		if v, ok := fields["maxRetries"]; ok {
			num, _ := untyped.Number(v)
			want.maxRetries = int(num)
		}
		if v, ok := fields["timeoutMs"]; ok {
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

// optionFields is the fuzz target's model of ParseOptions: the fields m
// sets (the flat ones, or those under retry) and whether m is valid.
func optionFields(m map[string]any) (map[string]any, bool) {
	fields := m
	if r, nested := m["retry"]; nested {
		rm, ok := r.(map[string]any)
		if !ok || len(m) > 1 {
			return nil, false
		}
		fields = rm
	}
	limits := map[string][2]int{"maxRetries": {MinMaxRetries, MaxMaxRetries}, "timeoutMs": {MinTimeoutMs, MaxTimeoutMs}}
	for k, v := range fields {
		lim, known := limits[k]
		num, isNum := untyped.Number(v)
		if !known || !isNum || math.IsNaN(num) || math.IsInf(num, 0) || num != math.Trunc(num) || num < float64(lim[0]) || num > float64(lim[1]) {
			return nil, false
		}
	}
	return fields, true
}

// checkOptionError fails t unless err is one line that names a key of m
// (or of m's retry) and says what is wrong: the platform's words for a bad
// value, the allowed keys for an unknown one, one form for both.
func checkOptionError(t *testing.T, m map[string]any, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, "stub option ") || strings.Contains(msg, "\n") {
		t.Fatalf("error not one line starting with the field: %q", msg)
	}
	keys := []string{}
	for k := range m {
		keys = append(keys, k)
	}
	if rm, ok := m["retry"].(map[string]any); ok {
		for k := range rm {
			keys = append(keys, "retry."+k)
		}
	}
	named := false
	for _, k := range keys {
		named = named || strings.HasPrefix(msg, "stub option "+k+":") || strings.HasPrefix(msg, "stub option "+strconv.Quote(k)+":") ||
			strings.HasPrefix(msg, "stub option "+quote.Q(k)+":")
	}
	platform := strings.Contains(msg, "must be an integer between") || strings.Contains(msg, "the provided value is not of type 'number'.") ||
		strings.Contains(msg, "must be a mapping with maxRetries, timeoutMs")
	known := (errors.Is(err, ErrType) || errors.Is(err, ErrRange)) && platform ||
		strings.Contains(msg, "unknown; allowed are maxRetries, timeoutMs") || strings.Contains(msg, "not both")
	if !named || !known {
		t.Fatalf("error does not name a key of %#v or say what is allowed: %q", m, msg)
	}
}
