package invoke

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The direct path and reflection give the same results, errors and panics.
func TestDirectMatchesReflection(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	fns := []struct {
		fn   any
		args []any
	}{
		{func(context.Context) error { return boom }, nil},
		{func(context.Context) (int, error) { return 7, nil }, nil},
		{func(context.Context) (any, error) { return []int{1}, nil }, nil},
		{func(_ context.Context, s string) (string, error) { return s + "!", nil }, []any{"hi"}},
		{func(_ context.Context, s string) (int, error) { return len(s), boom }, []any{"four"}},
		{func(_ context.Context, s string, n int) (int, error) { return len(s) + n, nil }, []any{"ab", 3}},
		{func(_ context.Context, n int) error { panic(n) }, []any{5}},
		{func(_ context.Context, a, b string) error { return errors.New(a + b) }, []any{"a", "b"}},
	}
	for i, tc := range fns {
		f, err := Compile("m", tc.fn)
		require.NoError(t, err)
		require.True(t, f.Direct(tc.args), "case %d takes the direct path", i)
		dv, derr := f.CallDirect(ctx, tc.args)
		in, err := f.Args(ctx, tc.args)
		require.NoError(t, err)
		rv, rerr := f.Call(in)
		assert.Equal(t, rv, dv, "case %d: result", i)
		var dp, rp *Panic
		if errors.As(derr, &dp) {
			require.ErrorAs(t, rerr, &rp, "case %d", i)
			assert.Equal(t, rp.Value, dp.Value)
			continue
		}
		assert.Equal(t, rerr, derr, "case %d: error", i)
	}
}

// Arguments that need converting (a JSON number for an int) or an
// unlisted shape go through reflection.
func TestDirectFallsBack(t *testing.T) {
	f, err := Compile("m", func(_ context.Context, s string, n int) error { return nil })
	require.NoError(t, err)
	assert.False(t, f.Direct([]any{"a", 3.0}))
	assert.False(t, f.Direct([]any{"a"}))
	g, err := Compile("m", func(_ context.Context, xs []int) error { return nil })
	require.NoError(t, err)
	assert.False(t, g.Direct([]any{[]int{1}}))
}

func TestCompileReportsBadSignatures(t *testing.T) {
	for _, tc := range []struct {
		fn   any
		want string
	}{
		{nil, `method "m": bad method signature: function is nil`},
		{42, `method "m": bad method signature: int is not a function`},
		{func(ctx context.Context, xs ...int) error { return nil }, "is variadic"},
		{func(n int) error { return nil }, "does not take a context.Context first"},
		{func(ctx context.Context) (int, string) { return 0, "" }, "does not return error last"},
		{func(ctx context.Context) (a, b int, err error) { return 0, 0, nil }, "returns 2 values before its error, and a method returns one at most"},
		{func(ctx context.Context) {}, "returns nothing"},
		{(func(context.Context) error)(nil), "function is nil"},
	} {
		_, err := Compile("m", tc.fn)
		require.ErrorIs(t, err, ErrSignature)
		assert.Contains(t, err.Error(), tc.want)
	}
}
