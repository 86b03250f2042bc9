package object_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type item struct {
	Name string
	Tags []string
	Qty  int
}

func keys(t *testing.T, s *object.Storage, opts object.ListOptions) []string {
	t.Helper()
	es, err := s.List(context.Background(), opts)
	require.NoError(t, err)
	out := []string{}
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

func TestStorageO4(t *testing.T) {
	ctx := context.Background()

	t.Run("values keep their Go type", func(t *testing.T) {
		s := object.NewStorage()
		require.NoError(t, s.Put(ctx, "n", 3))
		var n int
		found, err := s.Get(ctx, "n", &n)
		require.NoError(t, err)
		assert.True(t, found)
		assert.Equal(t, 3, n)
		var anyV any
		_, err = s.Get(ctx, "n", &anyV)
		require.NoError(t, err)
		assert.IsType(t, 0, anyV, "an int stays an int, even through any")
		var wide int64
		_, err = s.Get(ctx, "n", &wide)
		require.NoError(t, err)
		assert.Equal(t, int64(3), wide, "compatible types convert")
		var str string
		_, err = s.Get(ctx, "n", &str)
		require.ErrorIs(t, err, object.ErrStorage)
		assert.Contains(t, err.Error(), "cannot use 3 (a number): want a string")
		found, err = s.Get(ctx, "missing", &n)
		require.NoError(t, err)
		assert.False(t, found)
	})

	t.Run("values are copied in and out", func(t *testing.T) {
		s := object.NewStorage()
		in := item{Name: "apple", Tags: []string{"red"}, Qty: 1}
		require.NoError(t, s.Put(ctx, "a", in))
		in.Tags[0] = "green"
		var out item
		_, err := s.Get(ctx, "a", &out)
		require.NoError(t, err)
		assert.Equal(t, []string{"red"}, out.Tags, "changing the value after Put does not change storage")
		out.Tags[0] = "blue"
		var again item
		_, _ = s.Get(ctx, "a", &again)
		assert.Equal(t, []string{"red"}, again.Tags, "changing what Get filled in does not change storage")
	})

	t.Run("only plain data is stored", func(t *testing.T) {
		s := object.NewStorage()
		err := s.Put(ctx, "f", map[string]any{"cb": func() {}})
		require.ErrorIs(t, err, object.ErrStorage)
		assert.Contains(t, err.Error(), `Put "f": value[cb] holds a func`)
		assert.Equal(t, 0, s.Len(), "nothing is stored on error")
	})

	t.Run("delete", func(t *testing.T) {
		s := object.NewStorage()
		require.NoError(t, s.Put(ctx, "a", 1))
		found, err := s.Delete(ctx, "a")
		require.NoError(t, err)
		assert.True(t, found)
		found, _ = s.Delete(ctx, "a")
		assert.False(t, found)
	})

	t.Run("list orders by key bytes and filters", func(t *testing.T) {
		s := object.NewStorage()
		for _, k := range []string{"b", "a", "ab", "B", "item:2", "item:10", "item:1"} {
			require.NoError(t, s.Put(ctx, k, k))
		}
		assert.Equal(t, []string{"B", "a", "ab", "b", "item:1", "item:10", "item:2"}, keys(t, s, object.ListOptions{}))
		assert.Equal(t, []string{"item:1", "item:10", "item:2"}, keys(t, s, object.ListOptions{Prefix: "item:"}))
		assert.Equal(t, []string{"ab", "b"}, keys(t, s, object.ListOptions{Start: "ab", End: "item"}))
		assert.Equal(t, []string{"item:2", "item:10"}, keys(t, s, object.ListOptions{Prefix: "item:", Reverse: true, Limit: 2}))
		es, err := s.List(ctx, object.ListOptions{Prefix: "ab"})
		require.NoError(t, err)
		var v string
		require.NoError(t, es[0].Decode(&v))
		assert.Equal(t, "ab", v)
		assert.Equal(t, "ab", es[0].Value())
		_, err = s.List(ctx, object.ListOptions{Limit: -1})
		assert.ErrorContains(t, err, "List limit must be positive.")
		assert.Empty(t, keys(t, s, object.ListOptions{Start: "z", End: "a"}), "a start after the end selects nothing")
	})

	t.Run("transaction commits all", func(t *testing.T) {
		s := object.NewStorage()
		require.NoError(t, s.Put(ctx, "keep", 1))
		require.NoError(t, s.Put(ctx, "gone", 1))
		err := s.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
			require.NoError(t, tx.Put(ctx, "new", 2))
			_, err := tx.Delete(ctx, "gone")
			require.NoError(t, err)
			var n int
			found, _ := tx.Get(ctx, "new", &n)
			assert.True(t, found, "a transaction reads its own writes")
			assert.Equal(t, []string{"keep", "new"}, keys(t, tx, object.ListOptions{}))
			found, _ = s.Get(ctx, "new", &n)
			assert.False(t, found, "nothing is visible outside before commit")
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"keep": 1, "new": 2}, s.Snapshot())
	})

	t.Run("transaction rolls back on error and panic", func(t *testing.T) {
		s := object.NewStorage()
		require.NoError(t, s.Put(ctx, "a", 1))
		boom := errors.New("boom")
		err := s.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
			_ = tx.Put(ctx, "a", 2)
			_ = tx.Put(ctx, "b", 2)
			return boom
		})
		assert.ErrorIs(t, err, boom)
		assert.Equal(t, map[string]any{"a": 1}, s.Snapshot(), "none of the writes happened")
		assert.Panics(t, func() {
			_ = s.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
				_ = tx.Put(ctx, "a", 3)
				panic("in tx")
			})
		})
		assert.Equal(t, map[string]any{"a": 1}, s.Snapshot(), "a panic rolls back too")
	})

	t.Run("a finished transaction refuses use", func(t *testing.T) {
		s := object.NewStorage()
		var leaked *object.Storage
		require.NoError(t, s.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error { leaked = tx; return nil }))
		assert.ErrorContains(t, leaked.Put(ctx, "a", 1), "transaction already finished")
	})

	t.Run("nested transactions", func(t *testing.T) {
		s := object.NewStorage()
		err := s.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
			_ = tx.Put(ctx, "outer", 1)
			_ = tx.Transaction(ctx, func(ctx context.Context, inner *object.Storage) error {
				_ = inner.Put(ctx, "inner", 1)
				return errors.New("inner fails")
			})
			return tx.Transaction(ctx, func(ctx context.Context, inner *object.Storage) error {
				return inner.Put(ctx, "inner2", 1)
			})
		})
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"outer": 1, "inner2": 1}, s.Snapshot())
	})

	t.Run("snapshot and restore", func(t *testing.T) {
		s := object.NewStorage()
		_ = s.Put(ctx, "a", []int{1})
		snap := s.Snapshot()
		_ = s.Put(ctx, "a", []int{2})
		_ = s.Put(ctx, "b", 1)
		require.NoError(t, s.Restore(snap))
		assert.Equal(t, map[string]any{"a": []int{1}}, s.Snapshot())
	})
}
