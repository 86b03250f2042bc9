package clone

import (
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

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

// O5: a value that contains itself is refused, with the path to the place
// where it does; a part shared without a cycle is not one, and stays
// shared in the copy.
func TestO5_CopyRefusesACycleWithItsPath(t *testing.T) {
	a := &node{V: 1}
	a.Next = &node{V: 2, Next: a}
	m := map[string]any{"n": 1}
	m["self"] = m
	s := []any{1, nil}
	s[1] = s
	deep := &fz{}
	deep.Kids = []*fz{{}, {A: []any{0, map[string]any{"k": deep}}}}
	var inner fz
	inner.Next = &fz{arr: [2]*fz{nil, &inner}}
	for _, tc := range []struct {
		v    any
		want string
	}{
		{a, "value.Next.Next is value again"},
		{m, "value[self] is value again"},
		{s, "value[1] is value again"},
		{map[string]any{"top": m}, "value[top][self] is value[top] again"},
		{deep, "value.Kids[1].A[1][k] is value again"},
		{struct{ P *fz }{inner.Next}, "value.P.arr[1].Next is value.P again"},
	} {
		cp, _, err := Copy(tc.v, nil)
		assert.Nil(t, cp)
		require.ErrorIs(t, err, ErrCycle, tc.want)
		require.ErrorIs(t, err, ErrNotCopyable)
		assert.ErrorContains(t, err, tc.want+": value cannot be copied: it contains itself")
	}

	// Shared, not cyclic: the same pointer, map and slice twice, at any depth.
	shared := &node{V: 3}
	sm, ss := map[string]int{"a": 1}, []any{"x"}
	v := []any{shared, shared, &struct{ P, Q *node }{shared, shared}, sm, sm, ss, ss, map[string]any{"m": sm, "s": ss}}
	cp, _, err := Copy(v, nil)
	require.NoError(t, err)
	got := cp.([]any)
	assert.Same(t, got[0], got[1])
	assert.Same(t, got[0], got[2].(*struct{ P, Q *node }).Q)
	assert.NotSame(t, shared, got[0])
	got[3].(map[string]int)["a"] = 2
	assert.Equal(t, 2, got[4].(map[string]int)["a"], "a shared map stays shared")
	assert.Equal(t, 2, got[7].(map[string]any)["m"].(map[string]int)["a"])
	assert.Equal(t, 1, sm["a"])
}

// O5, S11: readers go by reference only under a policy that allows it;
// funcs, channels and operating-system handles never cross.
func TestO5_ReferencesNeedPolicyFuncsAndHandlesNeverCross(t *testing.T) {
	allow := &Policy{AllowRefs: true}
	a := &node{}
	for _, v := range []any{strings.NewReader("x"), map[string]any{"r": io.Reader(strings.NewReader("x"))}} {
		_, _, err := Copy(v, nil)
		require.ErrorIs(t, err, ErrNotCopyable, "%T", v)
		assert.ErrorContains(t, err, "holds a reader (*strings.Reader)")
		got, res, err := Copy(v, allow)
		require.NoError(t, err)
		assert.Equal(t, 1, res.Refs, "%T is passed by reference", v)
		assert.Equal(t, v, got)
	}
	_, res, err := Copy(map[string]any{"r": io.Reader(strings.NewReader("x"))}, allow)
	require.NoError(t, err)
	assert.Equal(t, "value[r] is a reader (*strings.Reader)", res.Ref)
	for _, tc := range []struct {
		v    any
		want string
	}{
		{func() {}, "value holds a func"},
		{make(chan int), "value holds a channel"},
		{[]any{1, func() {}}, "value[1] holds a func"},
		{struct{ C <-chan int }{}, "value.C holds a channel"},
		{os.Stdout, "value is an operating-system handle (*os.File)"},
		{map[string]any{"f": struct{ F *os.File }{os.Stdin}}, "value[f].F is an operating-system handle (*os.File)"},
		{unsafe.Pointer(a), "value holds an unsafe pointer"},
	} {
		for _, p := range []*Policy{nil, allow} {
			_, _, err := Copy(tc.v, p)
			require.ErrorIs(t, err, ErrNotCopyable, tc.want)
			assert.ErrorContains(t, err, tc.want)
		}
	}
	ref := &Policy{AllowRefs: true, Ref: func(v reflect.Value) (reflect.Value, string, bool) {
		return v, "a stub", v.Type() == reflect.TypeFor[*node]()
	}}
	n := &node{V: 1}
	got, res, err := Copy([]any{1, n}, ref)
	require.NoError(t, err)
	assert.Same(t, n, got.([]any)[1], "what Ref claims goes by reference")
	assert.Equal(t, Result{Refs: 1, Ref: "value[1] is a stub (*clone.node)"}, res)
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
