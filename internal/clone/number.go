package clone

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
)

// Number reads a number from untyped input: a value decoded from JSON
// (float64, or json.Number with UseNumber), from YAML (int, uint64,
// float64), or any Go integer or float kind, named types included. It is
// the one reader of untyped numbers behind stub.ParseOptions,
// agent.ParseRetryOptions and the stub options of a scenario, so that they
// agree on what a number is.
//
// A json.Number that overflows a float64 (1e400) is a number, ±Inf, so that
// the caller refuses it as out of range rather than as of the wrong type.
// A string, a bool, nil, a json.Number that is not a number ("abc"), and
// anything else is not a number: Number returns false, and the caller
// refuses it as of the wrong type. Number does not check that the value is
// whole, finite or in range: each caller does, with its own words.
func Number(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok {
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !(errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0)) {
			return 0, false
		}
		return f, true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}
