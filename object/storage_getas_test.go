package object_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStorageO4_GetAsGetsWhatGetGets: GetAs is Get without the pointer,
// with the same copies (rule O4: what a reader gets is its own) and the
// same errors.
func TestStorageO4_GetAsGetsWhatGetGets(t *testing.T) {
	ctx := context.Background()
	s := object.NewKeyValueStorage()
	require.NoError(t, s.Put(ctx, "n", 41))
	require.NoError(t, s.Put(ctx, "it", item{Name: "apple", Tags: []string{"red"}, Qty: 2}))

	n, ok, err := object.GetAs[int](ctx, s, "n")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 41, n)

	wide, ok, err := object.GetAs[int64](ctx, s, "n") // converts as Get does
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, int64(41), wide)

	it, ok, err := object.GetAs[item](ctx, s, "it")
	require.NoError(t, err)
	assert.True(t, ok)
	it.Tags[0] = "green" // the reader's copy: storage keeps "red"
	again, _, err := object.GetAs[item](ctx, s, "it")
	require.NoError(t, err)
	assert.Equal(t, []string{"red"}, again.Tags)

	missing, ok, err := object.GetAs[int](ctx, s, "none")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Zero(t, missing)

	_, ok, err = object.GetAs[int](ctx, s, "it")
	assert.True(t, ok)
	assert.True(t, errors.Is(err, object.ErrStorage), "an item is not an int: %v", err)
	assert.Contains(t, err.Error(), `Get "it"`)

	_, _, err = object.GetAs[int](ctx, s, strings.Repeat("k", object.MaxKeyBytes+1))
	assert.Error(t, err, "a key too long is refused as Get refuses it")
}

// TestStorageO4_GetAsAllocatesNothingForAnInt: the fast path of GetAs
// (issue 14: at most 3 allocations per fault-free call, the user's method
// included).
func TestStorageO4_GetAsAllocatesNothingForAnInt(t *testing.T) {
	ctx := context.Background()
	s := object.NewStorage()
	require.NoError(t, s.Put(ctx, "n", 1000))
	allocs := testing.AllocsPerRun(100, func() {
		if n, _, _ := object.GetAs[int](ctx, s, "n"); n != 1000 {
			t.Fatal(n)
		}
	})
	assert.Zero(t, allocs)
}

// GetAs reads a stored value as its own type, without a pointer.
func ExampleGetAs() {
	ctx := context.Background()
	s := object.NewStorage()
	_ = s.Put(ctx, "apples", 3)
	n, ok, err := object.GetAs[int](ctx, s, "apples")
	fmt.Println(n, ok, err)
	n, ok, err = object.GetAs[int](ctx, s, "pears")
	fmt.Println(n, ok, err)
	// Output:
	// 3 true <nil>
	// 0 false <nil>
}
