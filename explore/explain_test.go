package explore_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linearViolation replays seed of the shipped scenario name and returns
// its one linearizability violation.
func linearViolation(t *testing.T, name string, seed uint64) explore.Violation {
	t.Helper()
	e, err := explore.New(load(t, name), explore.Options{})
	require.NoError(t, err)
	r, err := e.Replay(seed)
	require.NoError(t, err)
	for _, v := range r.Violations {
		if v.Kind == explore.KindLinearizability {
			return v
		}
	}
	t.Fatalf("%s seed %d: no linearizability violation in %v", name, seed, r.Violations)
	return explore.Violation{}
}

// C10: a violation names the first operation no order of those before it
// explains (the call, its number and when it began), what the class
// answers there and what its caller saw, and leads its message with it.
func TestC10_AViolationNamesTheFirstUnexplainedOperation(t *testing.T) {
	v := linearViolation(t, "setquantity-overwrites-addone", 1)
	u := v.Unexplained
	require.NotNil(t, u, v.Message)
	assert.Equal(t, `Get("stock")`, u.Op)
	assert.Equal(t, 3, u.Call)
	assert.NotEmpty(t, u.At)
	assert.Equal(t, 2, u.Explained, "SetQuantity then AddOne explain the calls before it")
	assert.Equal(t, 3, u.Total)
	assert.Equal(t, []string{"11"}, u.Expected, "after them, the class answers 11")
	assert.Equal(t, "10", u.Observed, "the caller saw the overwritten 10")
	assert.True(t, strings.HasPrefix(v.Message, u.Text()), v.Message)
	assert.Equal(t, v, linearViolation(t, "setquantity-overwrites-addone", 1), "the same explanation every time (D1)")

	// As the summary's JSON carries it.
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var back explore.Violation
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, v, back)
	assert.Contains(t, string(data), `"unexplained":{"op":"Get(\"stock\")","call":3,`)
}

// C10: when every operation is explained but not the end state, the
// violation says what the class leaves and what the object was left with,
// where they differ only.
func TestC10_AnEndStateNoOrderExplainsIsNamedByItsDifference(t *testing.T) {
	v := linearViolation(t, "mailer-vs-ledger", 1)
	u := v.Unexplained
	require.NotNil(t, u, v.Message)
	assert.Equal(t, "the end state", u.Op)
	assert.Zero(t, u.Call)
	assert.Equal(t, u.Total, u.Explained, "every call is explained")
	require.Len(t, u.Expected, 1)
	assert.Equal(t, `storage {"sent":1}, 1 effect: email {"to":"ada@example.com","subject":"Your order has shipped"}`, u.Expected[0])
	assert.True(t, strings.HasPrefix(u.Observed, `storage {"sent":2}, 3 effects: email`), u.Observed)
	assert.Contains(t, v.Message, "every operation is explained (1 of 1), but not the end state: the class leaves storage {\"sent\":1}")
}
