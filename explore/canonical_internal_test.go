package explore

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonCanonical is canonical as it was before its fast path: the model's
// keys (and so every memo and verdict) must not change with it.
func jsonCanonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// D1: canonical's fast path writes json.Marshal's bytes for every value it
// takes (strings to escape, floats and blobs through json itself), and
// any other part (structs, typed slices and maps) through json alone.
func TestD1_CanonicalFastPathIsJSON(t *testing.T) {
	type retry struct {
		MaxAttempts int
		Breaker     *retry
	}
	type task struct { // as an agent keeps a queued task in its storage
		Seq      int
		Callback string
		Due      time.Time
		Retry    retry
		Tags     map[string]int
		hidden   int
		Score    float64
	}
	due := time.Date(2025, 1, 1, 0, 0, 2, 812252000, time.UTC)
	one := task{Seq: 1, Callback: "Confirm<", Due: due, Retry: retry{3, &retry{MaxAttempts: 1}}, Tags: map[string]int{"b": 2, "a": 1}, hidden: 5}
	values := []any{
		map[string]any{"__dosim/queue/1": one, "__dosim/queue/2": task{Seq: 2}, "plain": "x"},
		[]any{one, &one, due, []task{one}}, map[string]any{"nan": task{Score: math.NaN()}, "a": 1},
		map[string]any{"f": struct{ F func() }{func() {}}}, map[string]any{"m": map[string]task{"z": one, "a": {}}},
		nil, true, false, 0, -7, 1 << 40, int64(-1 << 62), "", "apple", "a b/c:d",
		"<html>", "a&b", `quote"d`, `back\slash`, "tab\t", "caf\u00e9", "\u2028", "\xff",
		[]any(nil), []any{}, []any{"apple", 3}, []any{[]any{1, "x"}, nil, true},
		[]any{1.5}, []any{"<"}, []any{struct{ A int }{1}},
		map[string]any(nil), map[string]any{}, map[string]any{"pear": 3, "apple": 1, "Zed": "z"},
		map[string]any{"a": []any{1, 2}, "b": map[string]any{"y": 1, "x": nil}},
		map[string]any{"k<": 1}, map[string]any{"a": 1.25}, map[string]any{"a": func() {}},
		map[string]any{"1": 1, "10": 2, "2": 3, "a": 4, "B": 5, "_": 6},
		3.0, float64(1e21), uint8(3), []int{1, 2}, map[string]int{"a": 1},
		// An SQL table as a snapshot holds it: its schema text has
		// newlines and tabs; a blob, a REAL, a NaN (json fails on it).
		map[string]any{"type": "table", "schema": "CREATE TABLE t (\n\ta TEXT,\n\tb BLOB\n)",
			"columns": []any{"a", "b"}, "rows": []any{[]any{"x", []byte("blob")}, []any{nil, 2.5}}},
		map[string]any{"k\n": int32(5), "n": math.NaN()}, []any{float32(0.1), uint64(1 << 63)},
	}
	for _, v := range values {
		assert.Equal(t, jsonCanonical(v), canonical(v), "%#v", v)
		assert.Equal(t, "ok "+jsonCanonical(v), resultKey(v, nil), "%#v", v)
	}
}

// D1: canonical writes every byte, and the runes json.Marshal escapes or
// replaces, as json.Marshal does, alone, between plain text, and as a
// map's key (appendJSONString).
func TestD1_CanonicalStringsAreJSONs(t *testing.T) {
	var cases []string
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z<")
	}
	cases = append(cases, "\u2028\u2029", "x\u2029y", "\ufffd", "\xed\xa0\x80", "\xe2\x80", "\xe2\x80\xa8z",
		"\U0001F600&", "CREATE TABLE t (\n\ta TEXT\r\n)", strings.Repeat("\t", 40))
	for _, s := range cases {
		for _, v := range []any{s, map[string]any{s: s}} {
			require.Equal(t, jsonCanonical(v), canonical(v), "%q", s)
		}
	}
}

// FuzzCanonicalString: canonical writes a string as json.Marshal does.
func FuzzCanonicalString(f *testing.F) {
	for _, s := range []string{"", "apple", "<>&", "\"\\", "\x00\x1f\x7f", "caf\u00e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, v := range []any{s, []any{s, 1}, map[string]any{s: s, "k": []any{s}}} {
			if got, want := canonical(v), jsonCanonical(v); got != want {
				t.Fatalf("canonical(%#v) = %s, json.Marshal gives %s", v, got, want)
			}
		}
	})
}

// H2: a value that shares its parts over and over (sixty levels of a pair
// of one part: 2^60 parts written out, which storage accepts, as the
// platform's structured clone keeps sharing) is written with each part
// once, at once: canonical expanded it whole, for good.
func TestH2_CanonicalOfAHeavilySharedValueIsBounded(t *testing.T) {
	var v any = "leaf"
	for range 60 {
		v = []any{v, v}
	}
	s := canonical(v)
	assert.Less(t, len(s), 4096, "%.200s", s)
	assert.Equal(t, s, canonical(v), "deterministic")
	assert.Contains(t, s, "@")
	m := map[string]any{"a": 1}
	type node struct{ L, R map[string]any }
	assert.Equal(t, canonical(node{m, m}), canonical(node{m, m}))
	assert.Equal(t, `{"a":1}`, canonical(m), "small values are written as before")
}
