// Package untyped builds the values that JSON and YAML decoders hand to
// dosim's option parsers (maps of float64, json.Number, ints, strings,
// lists), for the fuzz targets of stub.ParseOptions and
// object.ParseRetryOptions: one generator, so both parsers are fuzzed with
// the same inputs.
package untyped

import (
	"bytes"
	"encoding/json"
	"time"
)

// Map builds the map a fuzz input stands for: the JSON object js
// (decoded with or without json.Number), and then, unless kind picks
// none, key set to a value of the Go type kind picks, made from n, x or s.
// So the maps hold what JSON and YAML decoders make, and every Go number
// type besides.
func Map(js []byte, useNumber bool, key string, kind uint8, n int64, x float64, s string) map[string]any {
	m := map[string]any{}
	d := json.NewDecoder(bytes.NewReader(js))
	if useNumber {
		d.UseNumber()
	}
	if d.Decode(&m) != nil || m == nil {
		m = map[string]any{}
	}
	var v any
	switch kind % 20 {
	case 0:
		return m
	case 1:
		v = int(n)
	case 2:
		v = int8(n)
	case 3:
		v = int16(n)
	case 4:
		v = int32(n)
	case 5:
		v = n
	case 6:
		v = uint(n)
	case 7:
		v = uint8(n)
	case 8:
		v = uint16(n)
	case 9:
		v = uint32(n)
	case 10:
		v = uint64(n)
	case 11:
		v = float32(x)
	case 12:
		v = x
	case 13:
		v = json.Number(s)
	case 14:
		v = s
	case 15:
		v = n%2 == 0
	case 16:
		v = nil
	case 17:
		v = map[string]any{s: x}
	case 18:
		v = []any{x, s}
	case 19:
		v = time.Duration(n) // a named integer type
	}
	m[key] = v
	return m
}
