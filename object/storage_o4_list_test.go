package object_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestO4_ListStartAfterSkipsItsKey: list({startAfter: "b"}) begins after
// "b", in either order (real workerd 1.20261117.1).
func TestO4_ListStartAfterSkipsItsKey(t *testing.T) {
	ctx := context.Background()
	s := object.NewStorage()
	require.NoError(t, s.PutMany(ctx, map[string]any{"": 0, "a": 1, "b": 2, "b\x00": 3, "c": 4}))
	assert.Equal(t, []string{"b\x00", "c"}, keys(t, s, object.ListOptions{StartAfter: "b"}))
	assert.Equal(t, []string{"c", "b\x00"}, keys(t, s, object.ListOptions{StartAfter: "b", Reverse: true}))
	assert.Equal(t, []string{"b\x00"}, keys(t, s, object.ListOptions{StartAfter: "b", End: "c"}))
	assert.Empty(t, keys(t, s, object.ListOptions{StartAfter: "c", End: "a"}), "after the end: nothing")
	o, err := object.ParseListOptions(map[string]any{"startAfter": ""})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "b\x00", "c"}, keys(t, s, o), "after the empty key")
}

// TestO4_ListStartWithStartAfterIsRefused (real workerd 1.20261117.1:
// TypeError "list() cannot be called with both start and startAfter
// values.").
func TestO4_ListStartWithStartAfterIsRefused(t *testing.T) {
	ctx := context.Background()
	s := object.NewStorage()
	const want = "list() cannot be called with both start and startAfter values."
	_, err := s.List(ctx, object.ListOptions{Start: "a", StartAfter: "b"})
	require.ErrorIs(t, err, object.ErrStorage)
	assert.ErrorContains(t, err, want)
	_, err = object.ParseListOptions(map[string]any{"start": "", "startAfter": "b"})
	require.ErrorIs(t, err, object.ErrStorage)
	assert.ErrorContains(t, err, want)
}

// TestO4_ListLimitGivenAsDataMustBePositive: list({limit: 0}) and
// list({limit: -1}) are refused with TypeError "List limit must be
// positive." (real workerd 1.20261117.1); options given as data, as YAML
// writes them, are refused the same way.
func TestO4_ListLimitGivenAsDataMustBePositive(t *testing.T) {
	for _, limit := range []any{0, -1, 0.0, int64(-5), uint(0)} {
		_, err := object.ParseListOptions(map[string]any{"limit": limit})
		require.ErrorIs(t, err, object.ErrStorage, "limit %v", limit)
		assert.ErrorContains(t, err, "List limit must be positive.", "limit %v", limit)
	}
	o, err := object.ParseListOptions(map[string]any{
		"prefix": "p", "start": "p1", "end": "p9", "reverse": true, "limit": 3.0,
	})
	require.NoError(t, err)
	assert.Equal(t, object.ListOptions{Prefix: "p", Start: "p1", End: "p9", Reverse: true, Limit: 3}, o)
	o, err = object.ParseListOptions(map[string]any{"limit": nil})
	require.NoError(t, err)
	assert.Equal(t, object.ListOptions{}, o, "a nil value is not given")
	for bad, v := range map[string]any{"limit": "3", "reverse": 1, "start": 5, "limits": 3} {
		_, err := object.ParseListOptions(map[string]any{bad: v})
		assert.ErrorIs(t, err, object.ErrStorage, "%s: %v", bad, v)
	}
	_, err = object.ParseListOptions(map[string]any{"limit": 1.5})
	assert.ErrorIs(t, err, object.ErrStorage, "a limit with a fraction")
}
