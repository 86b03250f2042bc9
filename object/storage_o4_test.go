package object_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The expected values below are the real system's: real workerd
// 1.20261117.1 (compatibility date 2026-11-17, a KV-backed Durable Object),
// as issue 22 reports them; its messages are those of workerd's
// ActorStorageLimits (checkMaxKeySize, checkMaxValueSize,
// checkMaxPairsCount) and of DurableObjectStorage's list.

// TestO4_EmptyKeyIsAllowed: put("", 1) then get("") gives 1 (real workerd
// 1.20261117.1).
func TestO4_EmptyKeyIsAllowed(t *testing.T) {
	ctx := context.Background()
	s := object.NewStorage()
	require.NoError(t, s.Put(ctx, "", 1))
	var v int
	found, err := s.Get(ctx, "", &v)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, 1, v)
	got, ok, err := object.GetAs[int](ctx, s, "")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 1, got)
	many, err := s.GetMany(ctx, []string{"", "a"})
	require.NoError(t, err)
	assert.Len(t, many, 1)
	existed, err := s.Delete(ctx, "")
	require.NoError(t, err)
	assert.True(t, existed)
}

// TestO4_ValuesAreSizedAsV8SerialisesThem: a 131,072-byte Uint8Array and a
// 131,100-character string are stored, a 131,101-character string is
// refused with the platform's message (real workerd 1.20261117.1).
func TestO4_ValuesAreSizedAsV8SerialisesThem(t *testing.T) {
	ctx := context.Background()
	s := object.NewKeyValueStorage()
	require.NoError(t, s.Put(ctx, "bytes", make([]byte, 131_072)), "bytes count raw, not as base64")
	require.NoError(t, s.Put(ctx, "text", strings.Repeat("x", 131_100)))
	err := s.Put(ctx, "over", strings.Repeat("x", 131_101))
	require.ErrorIs(t, err, object.ErrStorage)
	assert.ErrorContains(t, err, "Values cannot be larger than 131072 bytes. A value of size 131107 was provided.")
	found, _ := s.Get(ctx, "over", new(string))
	assert.False(t, found, "a refused value is not stored")
	err = s.PutMany(ctx, map[string]any{"a": 1, "over": strings.Repeat("x", 131_101)})
	require.ErrorIs(t, err, object.ErrStorage)
	assert.ErrorContains(t, err, "A value of size 131107 was provided.")
}

// TestO4_KeysOver2048BytesAreRefusedInThePlatformsWords (real workerd
// 1.20261117.1).
func TestO4_KeysOver2048BytesAreRefusedInThePlatformsWords(t *testing.T) {
	ctx := context.Background()
	s := object.NewKeyValueStorage()
	key := strings.Repeat("k", 2049)
	const want = "Keys cannot be larger than 2048 bytes. A key of size 2049 was provided."
	err := s.Put(ctx, key, 1)
	require.ErrorIs(t, err, object.ErrStorage)
	assert.ErrorContains(t, err, want)
	_, err = s.Get(ctx, key, new(int))
	assert.ErrorContains(t, err, want)
	_, err = s.Delete(ctx, key)
	assert.ErrorContains(t, err, want)
	err = s.PutMany(ctx, map[string]any{key: 1})
	assert.ErrorContains(t, err, want)
}

// TestO4_MoreThan128KeysAreRefusedInThePlatformsWords (real workerd
// 1.20261117.1).
func TestO4_MoreThan128KeysAreRefusedInThePlatformsWords(t *testing.T) {
	ctx := context.Background()
	s := object.NewKeyValueStorage()
	const want = "Maximum number of key value pairs is 128. 129 pairs were provided."
	entries := map[string]any{}
	for _, k := range manyKeys(129) {
		entries[k] = 1
	}
	require.NoError(t, s.PutMany(ctx, entries), "put() takes 129 pairs (real workerd 1.20261117.1)")
	_, err := s.GetMany(ctx, manyKeys(129))
	require.ErrorIs(t, err, object.ErrStorage)
	assert.ErrorContains(t, err, want)
	// A SQLite-backed object's get takes them all (real workerd
	// 1.20261117.1 under localDisk storage: 129 entries).
	sq := object.NewStorage()
	require.NoError(t, sq.PutMany(ctx, entries))
	got, err := sq.GetMany(ctx, manyKeys(129))
	require.NoError(t, err)
	assert.Len(t, got, 129)
	n, err := s.DeleteMany(ctx, manyKeys(129))
	require.NoError(t, err, "delete() takes 129 keys (real workerd 1.20261117.1)")
	assert.Equal(t, 129, n)
}

// TestO4_ListWithAStartAfterTheEndReturnsNothing: list({start: "z", end:
// "a"}) is an empty map, not an error (real workerd 1.20261117.1).
func TestO4_ListWithAStartAfterTheEndReturnsNothing(t *testing.T) {
	ctx := context.Background()
	s := object.NewStorage()
	require.NoError(t, s.PutMany(ctx, map[string]any{"a": 1, "m": 2, "z": 3}))
	for _, reverse := range []bool{false, true} {
		es, err := s.List(ctx, object.ListOptions{Start: "z", End: "a", Reverse: reverse})
		require.NoError(t, err)
		assert.Empty(t, es)
	}
}

// TestO4_ListLimitMustBePositive: a negative limit is refused with the
// platform's TypeError message (real workerd 1.20261117.1); a zero Limit
// in ListOptions is dosim's "no limit".
func TestO4_ListLimitMustBePositive(t *testing.T) {
	ctx := context.Background()
	s := object.NewStorage()
	require.NoError(t, s.PutMany(ctx, map[string]any{"a": 1, "b": 2}))
	_, err := s.List(ctx, object.ListOptions{Limit: -1})
	require.ErrorIs(t, err, object.ErrStorage)
	assert.ErrorContains(t, err, "List limit must be positive.")
	es, err := s.List(ctx, object.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, es, 2, "the zero value is no limit")
}

// TestO4_SerialisedSizeIsV8s: serialisedSize counts what V8's serialiser
// writes for a Go value's JavaScript counterpart. The expected sizes are
// v8.serialize(value).length in node v20.20.2 (the V8 value serialiser,
// format version 15, the one workerd stores with), for the JavaScript value
// in each comment.
func TestO4_SerialisedSizeIsV8s(t *testing.T) {
	type row struct {
		Name string
		Tags []string
	}
	type one struct{ A int }
	packed := make([]int, 70_000)
	cases := []struct {
		v    any
		want int
	}{
		{strings.Repeat("x", 131_101), 131_107},                          // "x".repeat(131101)
		{make([]byte, 131_072), 131_085},                                 // new Uint8Array(131072)
		{packed, 140_011},                                                // Array.from({length: 70000}, () => 0)
		{row{Name: "a", Tags: []string{"x"}}, 28},                        // {Name: "a", Tags: ["x"]}
		{[]one{{A: 1}, {A: 2}}, 23},                                      // [{A: 1}, {A: 2}]
		{[]any{1.5, map[string]any{"a": nil}}, 23},                       // [1.5, {a: null}]
		{map[int]string{1: "a"}, 10},                                     // {1: "a"}
		{map[string]int{}, 5},                                            // {}
		{[]int{}, 7},                                                     // []
		{time.Unix(0, 0), 11},                                            // new Date(0)
		{3.5, 11}, {1.0, 4}, {-5, 4}, {1 << 31, 11}, {nil, 3}, {true, 3}, // numbers, null, true
	}
	for _, c := range cases {
		assert.Equal(t, c.want, object.SerialisedSize(c.v), "%T", c.v)
	}
}
