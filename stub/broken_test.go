package stub_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertBrokenBy checks that err, the error of a call of method on a
// broken stub, says so (rule L2): flagged Broken with the flags of first,
// the error that broke the stub, which it wraps, and naming that call.
func assertBrokenBy(t *testing.T, first, err error, method string) {
	t.Helper()
	var f, e *stub.Error
	require.ErrorAs(t, first, &f)
	require.ErrorAs(t, err, &e)
	assert.True(t, e.Broken, "flagged Broken: %v", err)
	assert.False(t, f.Broken, "the error that broke the stub is not itself Broken")
	assert.Equal(t, method, e.Method)
	assert.Equal(t, [4]bool{f.Retryable, f.Overloaded, f.Remote, f.DurableObjectReset},
		[4]bool{e.Retryable, e.Overloaded, e.Remote, e.DurableObjectReset}, "the flags of the error that broke it")
	assert.Equal(t, first, errors.Unwrap(err), "it wraps the error that broke the stub")
	assert.Contains(t, e.Error(), "broken stub, not sent: the call of "+f.Method+" failed at attempt ")
	assert.Contains(t, e.Error(), f.Msg)
	assert.Contains(t, e.Error(), "take a new stub from the namespace")
}

// L2: the error of a call on a broken stub says the stub is broken, which
// call broke it and how, and to take a new stub; its text, whole.
func TestL2_BrokenStubErrorSaysSo(t *testing.T) {
	w := newWorld(t, 1, transport.Rule{Method: "Add", Call: 1, Attempt: 1, Fault: transport.LoseResponse})
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, first := s.Call(ctx, "Add")
		_, err := s.Call(ctx, "Set", 7)
		assertBrokenBy(t, first, err, "Set")
		assert.Equal(t, "PROBE/p Set: broken stub, not sent: the call of Add failed at attempt 1: reply lost (lose-response): "+
			"the caller cannot tell whether the method ran (it did); take a new stub from the namespace (Get, GetByName) "+
			"for the next call (rule L2) [retryable, broken]", err.Error())
		assert.Equal(t, first, s.Broken(), "Broken returns the error that broke the stub")
		return nil
	}))
}
