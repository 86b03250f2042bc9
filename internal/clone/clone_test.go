package clone

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	Vals []int
	m    map[string]*int
}

type outer struct {
	Name  string
	In    inner
	Ptr   *inner
	When  time.Time
	Any   any
	Arr   [2][]byte
	hide  []string
	Alias *inner
}

// O5: a copy shares no memory with the original, unexported fields included.
func TestCopyIsDeepO5(t *testing.T) {
	n := 7
	shared := &inner{Vals: []int{1}}
	src := &outer{
		Name: "a", In: inner{Vals: []int{1, 2}, m: map[string]*int{"n": &n}},
		Ptr: shared, Alias: shared, When: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Any: []any{map[string]any{"k": []int{3}}}, Arr: [2][]byte{[]byte("x"), nil}, hide: []string{"h"},
	}
	cp, res, err := Copy(src, nil)
	require.NoError(t, err)
	assert.Zero(t, res.Refs)
	got := cp.(*outer)
	assert.True(t, reflect.DeepEqual(src, got))
	got.In.Vals[0] = 99
	*got.In.m["n"] = 99
	got.Ptr.Vals[0] = 99
	got.Any.([]any)[0].(map[string]any)["k"].([]int)[0] = 99
	got.Arr[0][0] = 'y'
	got.hide[0] = "changed"
	assert.Equal(t, []int{1, 2}, src.In.Vals)
	assert.Equal(t, 7, n)
	assert.Equal(t, []int{1}, src.Ptr.Vals)
	assert.Equal(t, []int{3}, src.Any.([]any)[0].(map[string]any)["k"])
	assert.Equal(t, byte('x'), src.Arr[0][0])
	assert.Equal(t, []string{"h"}, src.hide)
	assert.Same(t, got.Ptr, got.Alias, "pointers shared inside the value stay shared in the copy")
}

type node struct {
	Next *node
	V    int
}

func TestCopyHandlesCycles(t *testing.T) {
	a := &node{V: 1}
	a.Next = &node{V: 2, Next: a}
	cp, _, err := Copy(a, nil)
	require.NoError(t, err)
	got := cp.(*node)
	assert.Equal(t, 2, got.Next.V)
	assert.Same(t, got, got.Next.Next)
	assert.NotSame(t, a, got)
}

func TestReferencesNeedPolicy(t *testing.T) {
	for _, v := range []any{func() {}, make(chan int), strings.NewReader("x"), map[string]any{"r": io.Reader(strings.NewReader("x"))}} {
		_, _, err := Copy(v, nil)
		require.ErrorIs(t, err, ErrNotCopyable, "%T", v)
		got, res, err := Copy(v, &Policy{AllowRefs: true})
		require.NoError(t, err)
		assert.Equal(t, 1, res.Refs, "%T is passed by reference", v)
		_ = got
	}
	_, _, err := Copy([]any{1, func() {}}, nil)
	assert.ErrorContains(t, err, "value[1] holds a func")
}

func TestConvert(t *testing.T) {
	var i int
	require.NoError(t, Into(&i, 3.0))
	assert.Equal(t, 3, i)
	assert.ErrorContains(t, Into(&i, 3.5), "without losing its value")
	assert.ErrorContains(t, Into(&i, "3"), `cannot use "3" (a string): want an integer`)
	var u uint
	assert.ErrorContains(t, Into(&u, -1), "cannot use -1 without losing its value: want an integer from 0 to")
	var i64 int64
	assert.ErrorContains(t, Into(&i64, uint64(18446744073709551615)), "without losing its value", "a uint64 above MaxInt64 must not wrap to -1 (H2)")
	var s struct{ A int }
	require.NoError(t, Into(&s, map[string]any{"A": 2.0}), "untyped maps decode into structs")
	assert.Equal(t, 2, s.A)
	var p *int
	require.NoError(t, Into(&p, nil))
	assert.Nil(t, p)
	assert.ErrorContains(t, Into(&i, nil), "cannot use null: want an integer")
	assert.ErrorContains(t, Into(i, 1), "must be a non-nil pointer")
	var anyV any
	require.NoError(t, Into(&anyV, []int{1}))
	assert.Equal(t, []int{1}, anyV)
}

// A map or slice that holds itself is copied without looping forever.
func TestCopyHandlesMapAndSliceCycles(t *testing.T) {
	m := map[string]any{"n": 1}
	m["self"] = m
	cp, _, err := Copy(m, nil)
	require.NoError(t, err)
	got := cp.(map[string]any)
	got["n"] = 2
	assert.Equal(t, 1, m["n"])
	assert.Equal(t, 2, got["self"].(map[string]any)["n"], "the copy's cycle points at the copy")

	s := []any{1, nil}
	s[1] = s
	cs, _, err := Copy(s, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, cs.([]any)[0])
}

// A linked list far longer than MaxDepth fails with ErrTooDeep instead of
// overflowing the goroutine stack, which kills the process (the old copy
// recursed once per node with no limit).
func TestCopyDeepListFailsCleanly(t *testing.T) {
	var head *node
	for i := range 600_000 {
		head = &node{V: i, Next: head}
	}
	_, _, err := Copy(head, nil)
	require.ErrorIs(t, err, ErrTooDeep)
	require.ErrorIs(t, err, ErrNotCopyable)
	assert.ErrorContains(t, err, "value.Next.Next")
	assert.ErrorContains(t, err, "steps)")
	assert.Less(t, len(err.Error()), 400, "the path is shortened")

	// Just under the limit still copies.
	head = nil
	for i := range MaxDepth - 1 {
		head = &node{V: i, Next: head}
	}
	cp, _, err := Copy(head, nil)
	require.NoError(t, err)
	assert.Equal(t, MaxDepth-2, cp.(*node).V)
}

// Slices and arrays of scalars are copied whole, and still do not share
// memory with the original.
func TestCopyScalarSlicesAreDeep(t *testing.T) {
	type myInt int32
	src := struct {
		A []int64
		B []myInt
		C [3]float64
		D []string
	}{[]int64{1, 2}, []myInt{3}, [3]float64{4, 5, 6}, []string{"x"}}
	cp, _, err := Copy(&src, nil)
	require.NoError(t, err)
	got := cp.(*struct {
		A []int64
		B []myInt
		C [3]float64
		D []string
	})
	assert.Equal(t, src, *got)
	got.A[0], got.B[0], got.C[0], got.D[0] = 9, 9, 9, "y"
	assert.Equal(t, []int64{1, 2}, src.A)
	assert.Equal(t, []myInt{3}, src.B)
	assert.Equal(t, 4.0, src.C[0])
	assert.Equal(t, []string{"x"}, src.D)
}

// The path in an error still names map keys, indexes and fields.
func TestCopyErrorPath(t *testing.T) {
	v := map[string]any{"k": []any{0, struct{ F func() }{}}}
	_, _, err := Copy(v, nil)
	assert.ErrorContains(t, err, "value[k][1].F holds a func")
}
