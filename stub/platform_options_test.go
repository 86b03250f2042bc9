package stub_test

import (
	"testing"
	"time"

	"github.com/dosim/dosim/stub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S2: the stub options' errors carry the platform's own words, beside the
// field and the value dosim names. Source: real workerd 1.20261117.1,
// ns.get(id, {retry: {maxRetries: 11}}) and the like.
func TestS2_OptionErrorsInThePlatformsWords(t *testing.T) {
	const (
		rangeRetries = "retry.maxRetries must be an integer between 0 and 10"     // RangeError, real workerd 1.20261117.1
		rangeTimeout = "retry.timeoutMs must be an integer between 500 and 60000" // RangeError, real workerd 1.20261117.1
		typeRetries  = "Incorrect type for the 'maxRetries' field on 'RetryOptions': the provided value is not of type 'number'."
		typeTimeout  = "Incorrect type for the 'timeoutMs' field on 'RetryOptions': the provided value is not of type 'number'."
	)
	w := newWorld(t, 1)
	for _, tc := range []struct {
		opt   stub.Option
		field string
		want  string
	}{
		{stub.MaxRetries(11), "maxRetries", rangeRetries},
		{stub.MaxRetries(-1), "maxRetries", rangeRetries},
		{stub.TimeoutMs(499), "timeoutMs", rangeTimeout},
		{stub.TimeoutMs(60001), "timeoutMs", rangeTimeout},
	} {
		_, err := w.ns.GetByName("p", tc.opt)
		require.ErrorIs(t, err, stub.ErrRange)
		assert.Contains(t, err.Error(), tc.field)
		assert.Contains(t, err.Error(), tc.want)
	}
	for _, tc := range []struct {
		in       map[string]any
		sentinel error
		field    string
		want     string
	}{
		{map[string]any{"maxRetries": 2.5}, stub.ErrRange, "maxRetries", rangeRetries},
		{map[string]any{"timeoutMs": 100}, stub.ErrRange, "timeoutMs", rangeTimeout},
		{map[string]any{"maxRetries": "3"}, stub.ErrType, "maxRetries", typeRetries},
		{map[string]any{"timeoutMs": true}, stub.ErrType, "timeoutMs", typeTimeout},
		{map[string]any{"retry": map[string]any{"maxRetries": 11}}, stub.ErrRange, "retry.maxRetries", rangeRetries},
		{map[string]any{"retry": map[string]any{"timeoutMs": "1000"}}, stub.ErrType, "retry.timeoutMs", typeTimeout},
	} {
		_, err := stub.ParseOptions(tc.in)
		require.ErrorIs(t, err, tc.sentinel, "%v", tc.in)
		assert.Contains(t, err.Error(), "stub option "+tc.field+":")
		assert.Contains(t, err.Error(), tc.want)
	}
}

// S2: the platform's shape of the options is ns.get(id, {retry:
// {maxRetries, timeoutMs}}) (real workerd 1.20261117.1); ParseOptions
// takes it, keeps the flat form as dosim's shorthand, and refuses both at
// once naming the fields.
func TestS2_ParseOptionsTakesThePlatformsRetryShape(t *testing.T) {
	w := newWorld(t, 1)
	opts, err := stub.ParseOptions(map[string]any{"retry": map[string]any{"maxRetries": 2.0, "timeoutMs": 1500}})
	require.NoError(t, err)
	s := w.stub(t, opts...)
	assert.Equal(t, 2, s.MaxRetries())
	assert.Equal(t, 1500*time.Millisecond, s.Timeout())

	opts, err = stub.ParseOptions(map[string]any{"retry": map[string]any{}})
	require.NoError(t, err)
	assert.Equal(t, stub.DefaultMaxRetries, w.stub(t, opts...).MaxRetries())

	_, err = stub.ParseOptions(map[string]any{"retry": map[string]any{"maxRetries": 1}, "timeoutMs": 1000})
	assert.EqualError(t, err, "stub option retry: given together with timeoutMs: use one form, retry: {maxRetries, timeoutMs} or the flat maxRetries, timeoutMs, not both")
	_, err = stub.ParseOptions(map[string]any{"retry": 3})
	require.ErrorIs(t, err, stub.ErrType)
	assert.EqualError(t, err, "stub option retry: 3 (a number) is of the wrong type: must be a mapping with maxRetries, timeoutMs")
	_, err = stub.ParseOptions(map[string]any{"retry": map[string]any{"retries": 1}})
	assert.EqualError(t, err, `stub option "retry.retries": unknown; allowed are maxRetries, timeoutMs`)
	_, err = stub.ParseOptions(map[string]any{"retry": map[string]any{}, "extra": 1})
	assert.EqualError(t, err, `stub option "extra": unknown; allowed are maxRetries, timeoutMs, retry`)
}

// TestS2_AMisspelledOptionSaysWhatItMeant: an unknown option key close to
// an allowed one names it (issue 24's "did you mean"), in the flat form and
// under retry.
func TestS2_AMisspelledOptionSaysWhatItMeant(t *testing.T) {
	_, err := stub.ParseOptions(map[string]any{"retry": map[string]any{"maxRetrys": 3}})
	assert.EqualError(t, err, `stub option "retry.maxRetrys": unknown; allowed are maxRetries, timeoutMs (did you mean "maxRetries"?)`)
	_, err = stub.ParseOptions(map[string]any{"timeoutMS": 900})
	assert.EqualError(t, err, `stub option "timeoutMS": unknown; allowed are maxRetries, timeoutMs, retry (did you mean "timeoutMs"?)`)
}
