package stub

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/quote"
)

// ErrRange is wrapped by the error for an option value that is out of range
// or not an integer (rule S2).
var ErrRange = errors.New("out of range")

// ErrType is wrapped by the error for an option value of the wrong type, as
// from untyped input (JSON, YAML, map[string]any).
var ErrType = errors.New("wrong type")

// The limits of the stub options (rule S2).
const (
	DefaultMaxRetries = 4
	MinMaxRetries     = 0
	MaxMaxRetries     = 10
	DefaultTimeoutMs  = 10000
	MinTimeoutMs      = 500
	MaxTimeoutMs      = 60000
)

// The stub's retry backoff (rule S8). Before retry n, when n attempts have
// been made, the stub sleeps a whole number of milliseconds drawn uniformly
// from [0, min(BackoffBase·2^(n-1), BackoffCap)], both bounds included,
// from the runtime's seeded source: full jitter over 500ms, 1s, then 2s.
// See MaxBackoff.
const (
	BackoffBase = 500 * time.Millisecond
	BackoffCap  = 2 * time.Second
)

// MaxBackoff returns the longest sleep before retry n, when n attempts have
// been made: min(500ms·2^(n-1), 2s), so 500ms before the first retry, 1s
// before the second and 2s before every later one (rule S8). The sleep is a
// whole number of milliseconds uniform in [0, MaxBackoff(n)], bounds
// included, drawn from the runtime's seed; a retry whose sleep would reach
// the call's deadline does not start (rule S9). n below 1 counts as 1.
func MaxBackoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 3 {
		return BackoffCap
	}
	return min(BackoffBase<<(n-1), BackoffCap)
}

// retryBackoff draws the sleep before retry n from rng: full jitter, a
// whole number of milliseconds uniform in [0, MaxBackoff(n)] (rule S8).
func retryBackoff(rng *rand.Rand, n int) time.Duration {
	capMs := MaxBackoff(n).Milliseconds()
	return time.Duration(rng.Int64N(capMs+1)) * time.Millisecond
}

// Option configures a stub made by Namespace.Get.
type Option interface {
	apply(*config) error
}

type config struct {
	maxRetries int
	timeout    time.Duration
}

func defaults() config {
	return config{maxRetries: DefaultMaxRetries, timeout: DefaultTimeoutMs * time.Millisecond}
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// MaxRetries sets how many times a failed attempt may be retried: an
// integer from 0 to 10 (default 4, so at most 5 attempts).
func MaxRetries(n int) Option {
	return optionFunc(func(c *config) error {
		if n < MinMaxRetries || n > MaxMaxRetries {
			return rangeErr("maxRetries", fmt.Sprint(n), MinMaxRetries, MaxMaxRetries)
		}
		c.maxRetries = n
		return nil
	})
}

// TimeoutMs sets the call's retry deadline in milliseconds: an integer from
// 500 to 60000 (default 10000). No retry starts if it would reach the
// deadline; the first attempt is never cancelled (rule S9).
func TimeoutMs(ms int) Option {
	return optionFunc(func(c *config) error {
		if ms < MinTimeoutMs || ms > MaxTimeoutMs {
			return rangeErr("timeoutMs", fmt.Sprint(ms), MinTimeoutMs, MaxTimeoutMs)
		}
		c.timeout = time.Duration(ms) * time.Millisecond
		return nil
	})
}

// rangeErr is the error for a value out of range or not an integer: it
// names the field and the value, wraps ErrRange and ends with the
// platform's own RangeError message (real workerd 1.20261117.1).
func rangeErr(field, value string, lo, hi int) error {
	return fmt.Errorf("stub option %s: %s is %w: retry.%s must be an integer between %d and %d",
		field, value, ErrRange, leaf(field), lo, hi)
}

// typeErr is the error for a value that is not a number: it names the
// field and the value, wraps ErrType and ends with the platform's own
// TypeError message (real workerd 1.20261117.1).
func typeErr(field string, v any) error {
	return fmt.Errorf("stub option %s: %s is of the %w: %s", field, describe(v), ErrType, TypeMessage(leaf(field)))
}

// TypeMessage is the platform's TypeError message for a stub option field
// ("maxRetries" or "timeoutMs") given a value that is not a number, as the
// real workerd words it.
func TypeMessage(field string) string {
	return "Incorrect type for the '" + field + "' field on 'RetryOptions': the provided value is not of type 'number'."
}

// leaf is the last part of a field's path: "maxRetries" of
// "retry.maxRetries".
func leaf(field string) string {
	return field[strings.LastIndexByte(field, '.')+1:]
}

// ParseOptions reads stub options from untyped input, as decoded from JSON
// or YAML, in the platform's shape, {"retry": {"maxRetries": 2,
// "timeoutMs": 1500}} (as ns.get(id, {retry: {...}})), or in dosim's flat
// shorthand, {"maxRetries": 2, "timeoutMs": 1500}; both at once is an
// error naming the fields. A number is a float64 or a json.Number (from
// encoding/json, with or without UseNumber), an int or uint64 (from YAML),
// or any Go integer or float kind, as for agent.ParseRetryOptions. A value
// that is not a number (a string, a bool, null, a list, a mapping) is an
// error wrapping ErrType; a fraction or a value out of range wraps
// ErrRange; an unknown key is an error naming the known ones. Each message
// ends with the platform's own words.
func ParseOptions(m map[string]any) ([]Option, error) {
	r, nested := m["retry"]
	if !nested {
		return parseFields(m, "", "maxRetries, timeoutMs, retry")
	}
	for _, k := range []string{"maxRetries", "timeoutMs"} {
		if _, flat := m[k]; flat {
			return nil, fmt.Errorf("stub option retry: given together with %s: use one form, retry: {maxRetries, timeoutMs} or the flat maxRetries, timeoutMs, not both", k)
		}
	}
	if len(m) > 1 { // a key beside retry, and not a flat one: unknown
		rest := make(map[string]any, len(m)-1)
		for k, v := range m {
			if k != "retry" {
				rest[k] = v
			}
		}
		return parseFields(rest, "", "maxRetries, timeoutMs, retry")
	}
	rm, ok := r.(map[string]any)
	if !ok {
		what := describe(r)
		if _, num := clone.Number(r); num {
			what = quote.Cut(numberText(r)) + " (a number)"
		}
		return nil, fmt.Errorf("stub option retry: %s is of the %w: must be a mapping with maxRetries, timeoutMs", what, ErrType)
	}
	return parseFields(rm, "retry.", "maxRetries, timeoutMs")
}

// parseFields reads the fields maxRetries and timeoutMs of m, in key
// order; prefix is put before each field's name in messages, allowed
// lists the keys m may hold.
func parseFields(m map[string]any, prefix, allowed string) ([]Option, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var opts []Option
	for _, k := range keys {
		v := m[k]
		switch k {
		case "maxRetries":
			n, err := integer(prefix+k, v, MinMaxRetries, MaxMaxRetries)
			if err != nil {
				return nil, err
			}
			opts = append(opts, MaxRetries(n))
		case "timeoutMs":
			n, err := integer(prefix+k, v, MinTimeoutMs, MaxTimeoutMs)
			if err != nil {
				return nil, err
			}
			opts = append(opts, TimeoutMs(n))
		default:
			hint := ""
			if h := quote.Suggest(k, strings.Split(allowed, ", ")); h != "" {
				hint = " (" + h + ")"
			}
			return nil, fmt.Errorf("stub option %s: unknown; allowed are %s%s", quote.Q(prefix+k), allowed, hint)
		}
	}
	return opts, nil
}

// integer reads an untyped whole number within [lo, hi]. What counts as a
// number is clone.Number's: JSON's float64 and json.Number, YAML's ints,
// and every Go integer or float kind.
func integer(field string, v any, lo, hi int) (int, error) {
	f, ok := clone.Number(v)
	if !ok {
		return 0, typeErr(field, v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, rangeErr(field, quote.Cut(strings.TrimSuffix(numberText(v), ".0")), lo, hi)
	}
	return int(f), nil
}

// numberText writes a number clone.Number accepted as the user wrote it: a
// named integer type such as time.Duration as its number, not its String.
func numberText(v any) string {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("%d", v)
	case reflect.Float32, reflect.Float64:
		if rv.Type().PkgPath() != "" { // a named float type
			return fmt.Sprint(rv.Float())
		}
	}
	return fmt.Sprint(v)
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return quote.Q(x) + " (a string)"
	case bool:
		return fmt.Sprintf("%v (a bool)", x)
	case json.Number:
		return quote.Q(string(x)) + " (not a number)"
	}
	return fmt.Sprintf("a %T", v)
}
