package scenario_test

import (
	"testing"

	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/stub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S2: a scenario's stub options take the platform's shape,
// ns.get(id, {retry: {maxRetries, timeoutMs}}) (real workerd 1.20261117.1),
// beside dosim's flat shorthand; both at once is refused naming the fields.
func TestS2_StubOptionsTakeThePlatformsRetryShape(t *testing.T) {
	sc, err := scenario.Parse("ok.yaml", []byte("namespaces:\n  INVENTORY: inventory\nstubs:\n  shop:\n    options: {retry: {maxRetries: 2, timeoutMs: 1500}}\ncalls: [{stub: shop, method: Get, args: [a]}]\n"), builtIns)
	require.NoError(t, err)
	require.Len(t, sc.Stubs, 1)
	assert.Equal(t, 2, sc.Stubs[0].MaxRetries)
	assert.Equal(t, 1500, sc.Stubs[0].TimeoutMs)
	assert.Len(t, sc.Stubs[0].Options, 2)

	requireInvalid(t, "namespaces:\n  INVENTORY: inventory\nstubs:\n  shop:\n    options: {maxRetries: 1, retry: {timeoutMs: 1000}}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
		[]string{"bad.yaml:5: stubs.shop.options.retry: given together with maxRetries: use one form, retry: {maxRetries, timeoutMs} or the flat maxRetries, timeoutMs, not both"})
	requireInvalid(t, "namespaces:\n  INVENTORY: inventory\nstubs:\n  shop:\n    options: {retry: {retries: 1}}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
		[]string{"bad.yaml:5: stubs.shop.options.retry.retries: unknown field; allowed are maxRetries, timeoutMs"})
}

// S2: a scenario's bad stub options are refused in the platform's words
// (real workerd 1.20261117.1: RangeError "retry.maxRetries must be an
// integer between 0 and 10", TypeError "Incorrect type for the
// 'maxRetries' field on 'RetryOptions': ..."), after FILE:LINE: field:.
func TestS2_StubOptionErrorsInThePlatformsWords(t *testing.T) {
	const pre = "namespaces:\n  INVENTORY: inventory\nstubs:\n  shop:\n    options: "
	const post = "\ncalls: [{stub: shop, method: Get, args: [a]}]\n"
	cases := []struct {
		options string
		want    string
		is      error
	}{
		{"{retry: {maxRetries: 11}}", "bad.yaml:5: stubs.shop.options.retry.maxRetries: 11 is out of range: retry.maxRetries must be an integer between 0 and 10", stub.ErrRange},
		{"{retry: {timeoutMs: 100}}", "bad.yaml:5: stubs.shop.options.retry.timeoutMs: 100 is out of range: retry.timeoutMs must be an integer between 500 and 60000", stub.ErrRange},
		{"{retry: {maxRetries: three}}", `bad.yaml:5: stubs.shop.options.retry.maxRetries: "three" (a string) is of the wrong type: Incorrect type for the 'maxRetries' field on 'RetryOptions': the provided value is not of type 'number'.`, stub.ErrType},
		{"{retry: {timeoutMs: [1]}}", "bad.yaml:5: stubs.shop.options.retry.timeoutMs: a list is of the wrong type: Incorrect type for the 'timeoutMs' field on 'RetryOptions': the provided value is not of type 'number'.", stub.ErrType},
		{"{maxRetries: 12}", "bad.yaml:5: stubs.shop.options.maxRetries: 12 is out of range: retry.maxRetries must be an integer between 0 and 10", stub.ErrRange},
		{"{timeoutMs: true}", "bad.yaml:5: stubs.shop.options.timeoutMs: true (a bool) is of the wrong type: Incorrect type for the 'timeoutMs' field on 'RetryOptions': the provided value is not of type 'number'.", stub.ErrType},
	}
	for _, tc := range cases {
		t.Run(tc.options, func(t *testing.T) {
			err := requireInvalid(t, pre+tc.options+post, []string{tc.want})
			assert.ErrorIs(t, err, tc.is)
		})
	}
}
