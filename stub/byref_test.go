package stub_test

import (
	"testing"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holder embeds a stub: it is not one itself, though it has the stub's
// ArriveAs by promotion.
type holder struct {
	*stub.Stub
	N int
}

// S1, O5: the copy policy claims a stub, and only a stub: a struct that
// embeds one is copied field by field, the stub inside it arriving as a
// stub that never retries; a nil one inside it copies as nil.
func TestS1_AStubInsideAStructArrivesAsAStubThatDoesNotRetry(t *testing.T) {
	w := newWorld(t, 1)
	s := w.stub(t)
	policy := object.Hosting(seal.Key{}).CopyPolicy()

	v, res, err := clone.Copy(holder{Stub: s, N: 3}, policy)
	require.NoError(t, err)
	got := v.(holder)
	assert.Equal(t, 3, got.N)
	require.NotNil(t, got.Stub)
	assert.NotSame(t, s, got.Stub)
	assert.Contains(t, got.Stub.String(), "no retries")
	assert.Equal(t, 1, res.Refs)
	assert.Contains(t, res.Ref, "is a stub")

	v, res, err = clone.Copy(&holder{N: 4}, policy)
	require.NoError(t, err)
	assert.Nil(t, v.(*holder).Stub)
	assert.Equal(t, 0, res.Refs)
}
