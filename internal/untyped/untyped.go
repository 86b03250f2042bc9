// Package untyped builds the values that JSON and YAML decoders hand to
// dosim's option parsers (maps of float64, json.Number, ints, strings,
// lists), for the fuzz targets of stub.ParseOptions and
// agent.ParseRetryOptions: one generator, so both parsers are fuzzed with
// the same inputs.
package untyped

import (
	"bytes"
	"encoding/json"
	"reflect"
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

// Value is one number a fuzz corpus tries, as each kind of Map makes it:
// N for the integer kinds, X for the floats, S for json.Number and strings.
type Value struct {
	N int64
	X float64
	S string
}

// Input is one corpus entry: Map's arguments.
type Input struct {
	JS        []byte
	UseNumber bool
	Key       string
	Kind      uint8
	N         int64
	X         float64
	S         string
}

// Corpus is the nasty cases for a parser of the given keys: each JSON
// document, decoded with and without json.Number; every kind of value
// under keys[0] and the number kinds under the other keys, for each of
// values; and keys that are empty, unknown or not ASCII.
func Corpus(docs []string, values []Value, keys ...string) []Input {
	var out []Input
	for _, js := range docs {
		for _, useNumber := range []bool{false, true} {
			out = append(out, Input{JS: []byte(js), UseNumber: useNumber})
		}
	}
	for kind := range uint8(20) {
		for _, v := range values {
			out = append(out, Input{JS: []byte(`{}`), Key: keys[0], Kind: kind, N: v.N, X: v.X, S: v.S})
		}
	}
	for _, k := range keys[1:] {
		for _, kind := range []uint8{1, 12, 13} {
			for _, v := range values {
				out = append(out, Input{JS: []byte(`{}`), Key: k, Kind: kind, N: v.N, X: v.X, S: v.S})
			}
		}
	}
	for _, k := range []string{"", "TZ=UTC", "CRON_TZ=", "unknown", "ünïcödé"} {
		out = append(out, Input{JS: []byte(`{}`), Key: k, Kind: 1, N: 1, X: 1, S: "1"})
	}
	return out
}

// Number returns v as a float64 when it is a number as the option parsers
// document it: a value of any Go integer or float kind (named ones too,
// such as time.Duration), or a json.Number.
func Number(v any) (float64, bool) {
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
