package agent

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/internal/untyped"
)

// addSeeds adds the nasty cases to a corpus of untyped maps: keys[0] gets
// every kind of value, the other keys the numbers.
func addSeeds(f *testing.F, keys ...string) {
	docs := []string{
		`{}`, ``, `null`, `[]`, `"x"`, `{"maxAttempts": 3, "baseDelayMs": 100, "maxDelayMs": 1000}`,
		`{"maxAttempts": 1e308, "baseDelayMs": -1}`, `{"maxAttempts": 18446744073709551616}`,
		`{"maxAttempts": 2.5}`, `{"baseDelayMs": 0.5}`, `{"maxDelayMs": 1.999}`, `{"maxDelayMs": 1e300}`,
		`{"maxAttempts": "3"}`, `{"maxAttempts": {"a": {"b": 1}}}`, `{"maxAttempts": [1]}`,
		`{"maxAttempts": null}`, `{"maxAttempts": true}`, `{"": 1}`, `{"TZ=UTC": 1}`, `{"CRON_TZ=": 1}`,
		`{"maxAttempts": 1e400}`, `{"ünïcödé": "名前"}`, `{"maxRetries": 3}`,
	}
	values := []untyped.Value{
		{N: 0, X: 0, S: ""}, {N: 1, X: 1, S: "1"}, {N: -1, X: -1, S: "-1"}, {N: 3, X: 3.5, S: "3.5"}, {N: 100, X: 0.999, S: "0.999"},
		{N: math.MaxInt64, X: math.NaN(), S: "NaN"}, {N: math.MinInt64, X: math.Inf(1), S: "1e400"},
		{N: 1 << 53, X: math.Inf(-1), S: "-Inf"}, {N: 10, X: 1e308, S: "0x10"}, {N: 11, X: math.SmallestNonzeroFloat64, S: "ünïcödé"},
	}
	for _, in := range untyped.Corpus(docs, values, keys...) {
		f.Add(in.JS, in.UseNumber, in.Key, in.Kind, in.N, in.X, in.S)
	}
}

// FuzzParseRetryOptions (rule A4): no untyped input makes
// ParseRetryOptions panic; it returns an error exactly when a key is
// unknown, maxAttempts is not a whole number >= 1, or a delay is not a
// finite number >= 1 ms; the error matches ErrRetryOptions and names a key
// of the input; otherwise each option is the value given (delays rounded
// down), >= 1.
func FuzzParseRetryOptions(f *testing.F) {
	addSeeds(f, "maxAttempts", "baseDelayMs", "maxDelayMs")
	f.Fuzz(func(t *testing.T, js []byte, useNumber bool, key string, kind uint8, n int64, x float64, s string) {
		m := untyped.Map(js, useNumber, key, kind, n, x, s)
		valid := true
		for k, v := range m {
			num, isNum := untyped.Number(v)
			finite := isNum && !math.IsNaN(num) && !math.IsInf(num, 0)
			switch k {
			case "maxAttempts":
				valid = valid && finite && num >= 1 && num == math.Trunc(num)
			case "baseDelayMs", "maxDelayMs":
				valid = valid && finite && num >= 1
			default:
				valid = false
			}
		}
		o, err := ParseRetryOptions(m)
		if err != nil {
			if valid {
				t.Fatalf("ParseRetryOptions(%#v) refused valid options: %v", m, err)
			}
			var oe *RetryOptionsError
			if !errors.Is(err, ErrRetryOptions) || !errors.As(err, &oe) {
				t.Fatalf("ParseRetryOptions(%#v): error does not match ErrRetryOptions: %v", m, err)
			}
			if _, ok := m[oe.Field]; !ok {
				t.Fatalf("ParseRetryOptions(%#v): error names %q, not a key of the input", m, oe.Field)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "retry."+oe.Field+" must be ") && !strings.HasPrefix(msg, "retry: unknown option ") {
				t.Fatalf("ParseRetryOptions(%#v): error %q does not say what is allowed", m, msg)
			}
			if o.MaxAttempts != nil || o.BaseDelayMs != nil || o.MaxDelayMs != nil || o.Breaker != nil {
				t.Fatalf("ParseRetryOptions(%#v): options %+v beside error %v", m, o, err)
			}
			return
		}
		if !valid {
			t.Fatalf("ParseRetryOptions(%#v) accepted invalid options: %+v", m, o)
		}
		check := func(k string, got *int, want func(float64) int) {
			v, given := m[k]
			switch {
			case !given && got != nil:
				t.Fatalf("ParseRetryOptions(%#v) set %s = %d, not given", m, k, *got)
			case given && got == nil:
				t.Fatalf("ParseRetryOptions(%#v) dropped %s", m, k)
			case given:
				num, _ := untyped.Number(v)
				if *got < 1 || *got != want(num) {
					t.Fatalf("ParseRetryOptions(%#v): %s = %d, want %d", m, k, *got, want(num))
				}
			}
		}
		delay := func(f float64) int { return int(min(math.Floor(f), math.MaxInt64/float64(time.Millisecond))) }
		check("maxAttempts", o.MaxAttempts, func(f float64) int { return int(min(f, math.MaxInt32)) })
		check("baseDelayMs", o.BaseDelayMs, delay)
		check("maxDelayMs", o.MaxDelayMs, delay)
	})
}
