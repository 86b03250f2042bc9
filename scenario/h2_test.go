package scenario_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	rt "github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/stub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule H2: a YAML syntax error points at the line the parser stopped on,
// not at the start of the enclosing block (a stray } on line 10 was
// reported at the list item's line 9, a bad indent at the calls: line).
func TestH2_SyntaxErrorPointsAtTheOffendingLine(t *testing.T) {
	for name, c := range map[string]struct {
		yaml string
		want string
	}{
		"stray brace": {head + "calls:\n  - stub: shop\n    method: Get\n    args: [a]\n  - stub: shop\n}\n",
			"bad.yaml:10: yaml: did not find expected key (the file is not valid YAML)"},
		"bad indent": {head + "calls:\n  - stub: shop\n    method: Get\n    args: [a]\n  - stub: shop\n   method: Get\n",
			"bad.yaml:10: yaml: did not find expected '-' indicator (the file is not valid YAML)"},
		"unclosed flow list": {head + "calls: [\n", "bad.yaml:5: yaml: did not find expected node content (the file is not valid YAML)"},
		"in a second document": {head + "calls: [{stub: shop, method: Get, args: [a]}]\n---\na: b\n c: d\n",
			"bad.yaml:8: yaml: mapping values are not allowed in this context (the file is not valid YAML)"},
	} {
		_, err := scenario.Parse("bad.yaml", []byte(c.yaml), builtIns)
		require.Error(t, err, name)
		assert.Equal(t, c.want, err.Error(), name)
	}
}

// Rule H2: past 20 problems the list says how many more there are.
func TestH2_ProblemCapSaysHowManyMore(t *testing.T) {
	var b strings.Builder
	b.WriteString(head + "calls:\n")
	for i := range 25 {
		fmt.Fprintf(&b, "  - {stub: shop, method: Nope%d}\n", i)
	}
	_, err := scenario.Parse("bad.yaml", []byte(b.String()), builtIns)
	var es scenario.Errors
	require.True(t, errors.As(err, &es))
	require.Len(t, es, 21)
	assert.Equal(t, "bad.yaml:26: file: ... and 5 more (only the first 20 problems are listed; the next is on this line)", es[20].Error())
	assert.Contains(t, es[19].Error(), "bad.yaml:25: calls[19].method")
}

// Rule H2: an argument that does not fit the parameter's Go type is
// refused when the file loads; 18446744073709551615 for an int passed and
// wrapped to -1 when called.
func TestH2_ArgumentMustFitItsParameter(t *testing.T) {
	for arg, want := range map[string]string{
		"18446744073709551615": "18446744073709551615 is out of range: want an integer from -9223372036854775808 to 9223372036854775807",
		"9223372036854775808":  "9223372036854775808 is out of range: want an integer from -9223372036854775808 to 9223372036854775807",
		"1.5":                  "1.5 is not a whole number: want an integer from -9223372036854775808 to 9223372036854775807",
		"1e30":                 "1e+30 is out of range: want an integer from -9223372036854775808 to 9223372036854775807",
		".inf":                 "+Inf is not a whole number: want an integer from -9223372036854775808 to 9223372036854775807",
		"[1, 2]":               "[1,2] (a list) is of the wrong type: want an integer",
		"{a: 1}":               "a mapping is of the wrong type: want an integer",
	} {
		y := head + "calls:\n  - {stub: shop, method: SetQuantity, args: [apple, " + arg + "]}\n"
		_, err := scenario.Parse("bad.yaml", []byte(y), builtIns)
		require.Error(t, err, arg)
		assert.Equal(t, "bad.yaml:6: calls[0].args[1]: SetQuantity(string, int): argument 2: "+want, err.Error(), arg)
	}
	for _, arg := range []string{"9223372036854775807", "-9223372036854775808", "3.0", "0"} {
		y := head + "calls:\n  - {stub: shop, method: SetQuantity, args: [apple, " + arg + "]}\n"
		_, err := scenario.Parse("ok.yaml", []byte(y), builtIns)
		assert.NoError(t, err, arg)
	}
	// A struct parameter is described by its fields.
	y := "namespaces: {O: outbox}\nstubs: {o: {}}\ncalls:\n  - {stub: o, method: Deliver, args: [[1]]}\n"
	_, err := scenario.Parse("bad.yaml", []byte(y), builtIns)
	require.Error(t, err)
	assert.Equal(t, "bad.yaml:4: calls[0].args[0]: Deliver(examples.Webhook): argument 1: [1] (a list) is of the wrong type: want a mapping with URL, Body", err.Error())
}

// Rule H2: messages say what a value is in the user's terms, not Go's
// ("a []interface {} is of the wrong type").
func TestH2_OptionOfTheWrongTypeInUserTerms(t *testing.T) {
	for v, want := range map[string]string{
		"[1]":    "a list is of the wrong type: Incorrect type for the 'maxRetries' field on 'RetryOptions': the provided value is not of type 'number'.",
		"{a: 1}": "a mapping is of the wrong type: Incorrect type for the 'maxRetries' field on 'RetryOptions': the provided value is not of type 'number'.",
	} {
		y := "namespaces:\n  INVENTORY: inventory\nstubs:\n  shop:\n    options: {maxRetries: " + v + "}\ncalls: [{stub: shop, method: Get, args: [a]}]\n"
		_, err := scenario.Parse("bad.yaml", []byte(y), builtIns)
		require.Error(t, err, v)
		assert.Equal(t, "bad.yaml:5: stubs.shop.options.maxRetries: "+want, err.Error())
		assert.ErrorIs(t, err, stub.ErrType)
		assert.NotContains(t, err.Error(), "interface")
		assert.NotContains(t, err.Error(), "map[")
	}
}

// Rule H2: CheckArgs is the loader's check, for arguments that come from
// elsewhere (dosim verify and amplify --args): the same message, which
// argument, and errors.Is(err, runtime.ErrArguments).
func TestH2_CheckArgsIsTheLoadersCheck(t *testing.T) {
	m := (&examples.Inventory{}).Methods()["SetQuantity"]
	require.NoError(t, scenario.CheckArgs("SetQuantity", m, []any{"apple", 3}))
	require.NoError(t, scenario.CheckArgs("SetQuantity", m, []any{"apple", 3.0}))
	err := scenario.CheckArgs("SetQuantity", m, []any{"apple", 1.5})
	require.ErrorIs(t, err, rt.ErrArguments)
	var ae *scenario.ArgsError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 2, ae.Arg)
	assert.Equal(t, "SetQuantity(string, int): argument 2: 1.5 is not a whole number: want an integer from -9223372036854775808 to 9223372036854775807", err.Error())
	err = scenario.CheckArgs("SetQuantity", m, nil)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 0, ae.Arg)
	assert.EqualError(t, err, "SetQuantity(string, int) takes 2 argument(s), got 0")
	assert.ErrorIs(t, scenario.CheckArgs("X", object.Method{}, nil), rt.ErrArguments)
}

// Rule H2: a message echoes at most 64 bytes of what the file says and
// how long it was (package internal/quote): a 500 KB unknown method name
// made a 500 KB message.
func TestH2_MessagesEchoBoundedInput(t *testing.T) {
	big := strings.Repeat("M", 500_000)
	for name, y := range map[string]string{
		"method":   head + "calls:\n  - {stub: shop, method: " + big + "}\n",
		"stub":     head + "calls:\n  - {stub: " + big + ", method: Get, args: [a]}\n",
		"field":    head + "? " + big + "\n: 1\n",
		"fault":    head + "faults:\n  rules:\n    - {method: Get, fault: " + big + "}\ncalls: []\n",
		"duration": head + "calls:\n  - sleep: " + big + "\n",
		"argument": head + "calls:\n  - {stub: shop, method: SetQuantity, args: [apple, " + big + "]}\n",
		"list arg": head + "calls:\n  - {stub: shop, method: SetQuantity, args: [apple, [" + strings.Repeat("1, ", 200_000) + "1]]}\n",
		"option":   "namespaces: {INVENTORY: inventory}\nstubs: {shop: {options: {maxRetries: " + big + "}}}\n",
	} {
		_, err := scenario.Parse("big.yaml", []byte(y), builtIns)
		require.Error(t, err, name)
		assert.Less(t, len(err.Error()), 1000, "%s: %.300s", name, err)
		assert.Regexp(t, `\.\.\. \([0-9]{5,} bytes\)`, err.Error(), name)
	}
}
