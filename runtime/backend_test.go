package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backed is a class that writes a value of n bytes and then runs SQL.
type backed struct{ st *object.State }

func (b *backed) Methods() object.Methods {
	return object.Methods{
		"Store": object.Func(func(ctx context.Context, n int) error {
			return b.st.Storage().Put(ctx, "v", strings.Repeat("x", n))
		}),
		"Query": object.Func(func(ctx context.Context) (int, error) {
			c, err := b.st.SQL().Exec(ctx, "SELECT 1 AS one")
			if err != nil {
				return 0, err
			}
			return c.Len(), nil
		}),
	}
}

// callBacked calls method on an object of a namespace defined with opts.
func callBacked(t *testing.T, method string, args []any, opts ...runtime.NamespaceOption) (any, error) {
	t.Helper()
	rt := runtime.New()
	t.Cleanup(func() { _ = rt.Close() })
	ns := rt.Namespace("B", func(st *object.State) object.Object { return &backed{st: st} }, opts...)
	var got any
	var callErr error
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("b")
		if err != nil {
			return err
		}
		got, callErr = s.Call(ctx, method, args...)
		return nil
	}))
	return got, callErr
}

// L8, Q1: a namespace is SQLite-backed unless it says otherwise, as new
// classes are on the platform; a key-value-backed object has no SQL and
// fails with the platform's words (real workerd 1.20261117.1:
// ctx.storage.sql of a class without enableSql throws "This Durable
// Object is not backed by SQLite storage, so the SQL API is not
// available."; issue 34, row 4).
func TestQ1_AKeyValueBackedObjectHasNoSQL(t *testing.T) {
	n, err := callBacked(t, "Query", nil)
	require.NoError(t, err, "SQLite-backed by default")
	assert.Equal(t, 1, n)

	_, err = callBacked(t, "Query", nil, runtime.KeyValueBacked())
	require.Error(t, err)
	assert.ErrorContains(t, err, "This Durable Object is not backed by SQLite storage, so the SQL API is not available.")

	rt := runtime.New()
	defer rt.Close()
	assert.Equal(t, object.SQLiteBacked, rt.Namespace("A", func(*object.State) object.Object { return &backed{} }).Backend())
	assert.Equal(t, object.KeyValueBacked, rt.Namespace("B", func(*object.State) object.Object { return &backed{} }, runtime.KeyValueBacked()).Backend())
}

// L8: the key-value limits follow the backend (issue 34, row 13). A
// SQLite-backed object stores a 500 KiB value ("Key + value size: 2 MB",
// the Durable Objects limits page; real workerd 1.20261117.1 under
// localDisk stores it); a key-value-backed one refuses it ("Values cannot
// be larger than 131072 bytes", real workerd under inMemory storage).
func TestL8_ValueLimitsFollowTheBackend(t *testing.T) {
	_, err := callBacked(t, "Store", []any{500 << 10})
	assert.NoError(t, err, "SQLite-backed: a 500 KiB value is stored")
	_, err = callBacked(t, "Store", []any{object.MaxSQLitePairBytes})
	assert.ErrorContains(t, err, "cannot be larger than 2000000 bytes together", "past 2 MB with its key")

	_, err = callBacked(t, "Store", []any{500 << 10}, runtime.KeyValueBacked())
	assert.ErrorContains(t, err, "Values cannot be larger than 131072 bytes.")
}
