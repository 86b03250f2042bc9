package stub_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S2: every out-of-range and wrongly typed option value is refused with a
// message naming the field, the value and what is allowed.
func TestOptionBadInputS2(t *testing.T) {
	w := newWorld(t, 1)
	typed := []struct {
		opt  stub.Option
		want string
	}{
		{stub.MaxRetries(-1), "stub option maxRetries: -1 is out of range: retry.maxRetries must be an integer between 0 and 10"},
		{stub.MaxRetries(11), "stub option maxRetries: 11 is out of range: retry.maxRetries must be an integer between 0 and 10"},
		{stub.TimeoutMs(499), "stub option timeoutMs: 499 is out of range: retry.timeoutMs must be an integer between 500 and 60000"},
		{stub.TimeoutMs(60001), "stub option timeoutMs: 60001 is out of range: retry.timeoutMs must be an integer between 500 and 60000"},
		{stub.TimeoutMs(0), "stub option timeoutMs: 0 is out of range: retry.timeoutMs must be an integer between 500 and 60000"},
	}
	for _, tc := range typed {
		_, err := w.ns.GetByName("p", tc.opt)
		require.ErrorIs(t, err, stub.ErrRange)
		assert.Contains(t, err.Error(), tc.want)
	}

	untyped := []struct {
		in       map[string]any
		sentinel error
		want     string
	}{
		{map[string]any{"maxRetries": "3"}, stub.ErrType, `stub option maxRetries: "3" (a string) is of the wrong type: Incorrect type for the 'maxRetries' field on 'RetryOptions': the provided value is not of type 'number'.`},
		{map[string]any{"maxRetries": true}, stub.ErrType, "stub option maxRetries: true (a bool) is of the wrong type"},
		{map[string]any{"maxRetries": nil}, stub.ErrType, "stub option maxRetries: null is of the wrong type"},
		{map[string]any{"maxRetries": []any{1}}, stub.ErrType, "stub option maxRetries: a []interface {} is of the wrong type"},
		{map[string]any{"timeoutMs": map[string]any{}}, stub.ErrType, "stub option timeoutMs: a map[string]interface {} is of the wrong type: Incorrect type for the 'timeoutMs' field on 'RetryOptions': the provided value is not of type 'number'."},
		{map[string]any{"maxRetries": 2.5}, stub.ErrRange, "stub option maxRetries: 2.5 is out of range: retry.maxRetries must be an integer between 0 and 10"},
		{map[string]any{"maxRetries": -1}, stub.ErrRange, "stub option maxRetries: -1 is out of range"},
		{map[string]any{"maxRetries": 11.0}, stub.ErrRange, "stub option maxRetries: 11 is out of range"},
		{map[string]any{"maxRetries": math.NaN()}, stub.ErrRange, "stub option maxRetries: NaN is out of range"},
		{map[string]any{"timeoutMs": 499}, stub.ErrRange, "stub option timeoutMs: 499 is out of range: retry.timeoutMs must be an integer between 500 and 60000"},
		{map[string]any{"timeoutMs": 1e9}, stub.ErrRange, "stub option timeoutMs: 1e+09 is out of range"},
		{map[string]any{"timeoutMs": 600.5}, stub.ErrRange, "stub option timeoutMs: 600.5 is out of range"},
	}
	for _, tc := range untyped {
		_, err := stub.ParseOptions(tc.in)
		require.ErrorIs(t, err, tc.sentinel, "%v", tc.in)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := stub.ParseOptions(map[string]any{"retries": 3})
	assert.EqualError(t, err, `stub option "retries": unknown; allowed are maxRetries, timeoutMs, retry`)
}

// S2: well-formed untyped options take effect; JSON numbers are float64.
func TestParseOptionsS2(t *testing.T) {
	opts, err := stub.ParseOptions(map[string]any{"maxRetries": 2.0, "timeoutMs": int64(1500)})
	require.NoError(t, err)
	w := newWorld(t, 1, every("Add", 5, transport.NotDelivered)...)
	s := w.stub(t, opts...)
	assert.Equal(t, 2, s.MaxRetries())
	assert.Equal(t, 1500*time.Millisecond, s.Timeout())
	require.NoError(t, w.rt.Run(func(ctx context.Context) error { _, _ = s.Call(ctx, "Add"); return nil }))
	c := w.rt.Calls()[0]
	assert.LessOrEqual(t, len(c.Attempts), 3)
	assert.Contains(t, []transport.Outcome{transport.OutcomeAttemptsExhausted, transport.OutcomeTimeout}, c.Outcome)
}

// S2: stub.ParseOptions reads numbers as agent.ParseRetryOptions does
// (issue 10: one parser of untyped numbers). It used to refuse a
// json.Number, which encoding/json makes with UseNumber, and named number
// types, which agent.ParseRetryOptions took.
func TestS2_ParseOptionsReadsNumbersAsObjectDoes(t *testing.T) {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(`{"maxRetries": 3, "timeoutMs": 2500}`))
	d.UseNumber()
	require.NoError(t, d.Decode(&m))
	require.IsType(t, json.Number(""), m["maxRetries"])
	opts, err := stub.ParseOptions(m)
	require.NoError(t, err)
	w := newWorld(t, 1)
	s := w.stub(t, opts...)
	assert.Equal(t, 3, s.MaxRetries())
	assert.Equal(t, 2500*time.Millisecond, s.Timeout())

	type count int
	opts, err = stub.ParseOptions(map[string]any{"maxRetries": count(7)})
	require.NoError(t, err)
	assert.Equal(t, 7, w.stub(t, opts...).MaxRetries())

	// The same values agent.ParseRetryOptions takes and refuses.
	_, err = agent.ParseRetryOptions(map[string]any{"maxAttempts": json.Number("3")})
	require.NoError(t, err)

	refused := []struct {
		v        any
		sentinel error
		want     string
	}{
		{json.Number("2.5"), stub.ErrRange, "stub option maxRetries: 2.5 is out of range: retry.maxRetries must be an integer between 0 and 10"},
		{json.Number("11"), stub.ErrRange, "stub option maxRetries: 11 is out of range: retry.maxRetries must be an integer between 0 and 10"},
		{json.Number("1e400"), stub.ErrRange, "stub option maxRetries: 1e400 is out of range: retry.maxRetries must be an integer between 0 and 10"},
		{json.Number("three"), stub.ErrType, `stub option maxRetries: "three" (not a number) is of the wrong type: Incorrect type for the 'maxRetries' field on 'RetryOptions': the provided value is not of type 'number'.`},
		{time.Duration(11), stub.ErrRange, "stub option maxRetries: 11 is out of range: retry.maxRetries must be an integer between 0 and 10"},
	}
	for _, tc := range refused {
		_, err := stub.ParseOptions(map[string]any{"maxRetries": tc.v})
		require.ErrorIs(t, err, tc.sentinel, "%#v", tc.v)
		assert.EqualError(t, err, tc.want)
	}
}
