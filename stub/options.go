package stub

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
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

func rangeErr(field, value string, lo, hi int) error {
	return fmt.Errorf("stub option %s: %s is %w: must be an integer from %d to %d", field, value, ErrRange, lo, hi)
}

// ParseOptions reads stub options from untyped input, as decoded from JSON
// or YAML: the keys "maxRetries" and "timeoutMs". A value that is not a
// number is an error wrapping ErrType; a fraction or a value out of range
// wraps ErrRange; an unknown key is an error naming the known ones.
func ParseOptions(m map[string]any) ([]Option, error) {
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
			n, err := integer(k, v, MinMaxRetries, MaxMaxRetries)
			if err != nil {
				return nil, err
			}
			opts = append(opts, MaxRetries(n))
		case "timeoutMs":
			n, err := integer(k, v, MinTimeoutMs, MaxTimeoutMs)
			if err != nil {
				return nil, err
			}
			opts = append(opts, TimeoutMs(n))
		default:
			return nil, fmt.Errorf("stub option %q: unknown; allowed are maxRetries, timeoutMs", k)
		}
	}
	return opts, nil
}

// integer reads an untyped whole number within [lo, hi].
func integer(field string, v any, lo, hi int) (int, error) {
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int8:
		f = float64(x)
	case int16:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint:
		f = float64(x)
	case uint8:
		f = float64(x)
	case uint16:
		f = float64(x)
	case uint32:
		f = float64(x)
	case uint64:
		f = float64(x)
	case float32:
		f = float64(x)
	case float64:
		f = x
	default:
		return 0, fmt.Errorf("stub option %s: %s is of the %w: must be a number, an integer from %d to %d",
			field, describe(v), ErrType, lo, hi)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, rangeErr(field, strings.TrimSuffix(fmt.Sprint(v), ".0"), lo, hi)
	}
	return int(f), nil
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q (a string)", x)
	case bool:
		return fmt.Sprintf("%v (a bool)", x)
	}
	return fmt.Sprintf("a %T", v)
}
