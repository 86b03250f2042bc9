package scenario_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// C7: a count given as bounds that are not valid is refused with FILE:LINE:
// field: what is wrong and what is allowed, like any bad input.
func TestC7_BadBoundsMessages(t *testing.T) {
	call := func(expect string) string {
		return head + "calls:\n  - {stub: shop, method: Get, args: [a], expect: " + expect + "}\n"
	}
	const calls = "want an integer from 0 to 11 (exactly that many), or {min: N}, {max: N} or both"
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"max below zero", call("{attempts: {max: -1}}"),
			[]string{"bad.yaml:6: calls[0].expect.attempts.max: -1 is out of range: want an integer from 0 to 11"}},
		{"min below zero", call("{executions: {min: -1}}"),
			[]string{"bad.yaml:6: calls[0].expect.executions.min: -1 is out of range: want an integer from 0 to 11"}},
		{"max not a number", call("{executions: {max: x}}"),
			[]string{`bad.yaml:6: calls[0].expect.executions.max: is a string ("x"): want an integer from 0 to 11`}},
		{"max null", call("{rejected: {max: null}}"),
			[]string{"bad.yaml:6: calls[0].expect.rejected.max: is empty (null): want an integer from 0 to 11"}},
		{"min above max", call("{rejected: {min: 3, max: 1}}"),
			[]string{"bad.yaml:6: calls[0].expect.rejected: min 3 is above max 1: want min at most max, e.g. {min: 1, max: 3}"}},
		{"unknown key", call("{attempts: {mx: 1}}"),
			[]string{"bad.yaml:6: calls[0].expect.attempts.mx: unknown field (did you mean \"max\"?); allowed are min, max"}},
		{"unknown key beside a good one", call("{attempts: {max: 2, mn: 1}}"),
			[]string{"bad.yaml:6: calls[0].expect.attempts.mn: unknown field (did you mean \"min\"?); allowed are min, max"}},
		{"empty mapping", call("{attempts: {}}"),
			[]string{"bad.yaml:6: calls[0].expect.attempts: is empty: want {min: N}, {max: N} or both, with N from 0 to 11, e.g. {max: 1}"}},
		{"a float", call("{attempts: 1.5, effects: {max: 0.5}}"),
			[]string{
				"bad.yaml:6: calls[0].expect.attempts: is a number (1.5): " + calls,
				"bad.yaml:6: calls[0].expect.effects.max: is a number (0.5): want an integer from 0 to 1000000",
			}},
		{"a list or a string", call("{attempts: [1, 2], executions: \"1\"}"),
			[]string{
				"bad.yaml:6: calls[0].expect.attempts: is a list: " + calls,
				`bad.yaml:6: calls[0].expect.executions: is a string ("1"): ` + calls,
			}},
		{"above the field's maximum", call("{attempts: {max: 12}, executions: {min: 1, max: 12}, effects: {min: 1000001}}"),
			[]string{
				"bad.yaml:6: calls[0].expect.attempts.max: 12 is out of range: want an integer from 0 to 11",
				"bad.yaml:6: calls[0].expect.executions.max: 12 is out of range: want an integer from 0 to 11",
				"bad.yaml:6: calls[0].expect.effects.min: 1000001 is out of range: want an integer from 0 to 1000000",
			}},
		{"above the field's maximum with an outer loop", head + "calls:\n  - {stub: shop, method: Get, args: [a], outer: 2, expect: {calls: {min: 3}, attempts: {max: 23}}}\n",
			[]string{
				"bad.yaml:6: calls[0].expect.calls.min: 3 is out of range: want an integer from 1 to 2",
				"bad.yaml:6: calls[0].expect.attempts.max: 23 is out of range: want an integer from 0 to 22",
			}},
		{"calls below one", head + "calls:\n  - {stub: shop, method: Get, args: [a], outer: 2, expect: {calls: {max: 0}}}\n",
			[]string{"bad.yaml:6: calls[0].expect.calls.max: 0 is out of range: want an integer from 1 to 2"}},
		{"end state", head + "calls: [{stub: shop, method: Get, args: [a]}]\nexpect:\n  effects: {charge: {max: -1}, email: {}}\n  resets:\n    shop: {min: x}\n",
			[]string{
				"bad.yaml:9: expect.resets.shop.min: is a string (\"x\"): want an integer from 0 to 1000000",
				"bad.yaml:7: expect.effects.charge.max: -1 is out of range: want an integer from 0 to 1000000",
				"bad.yaml:7: expect.effects.email: is empty: want {min: N}, {max: N} or both, with N from 0 to 1000000, e.g. {max: 1}",
			}},
		{"explore block", head + "calls: [{stub: shop, method: Get, args: [a]}]\nexplore:\n  expect:\n    effects:\n      charge: {mx: 1}\n      email: {min: 2, max: 1}\n",
			[]string{
				"bad.yaml:9: explore.expect.effects.charge.mx: unknown field (did you mean \"max\"?); allowed are min, max",
				"bad.yaml:10: explore.expect.effects.email: min 2 is above max 1: want min at most max, e.g. {min: 1, max: 2}",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireInvalid(t, tc.yaml, tc.want)
		})
	}
}

// C7: what a Count holds and how it reads to a person.
func TestC7_CountHoldsAndReads(t *testing.T) {
	cases := []struct {
		c               scenario.Count
		str, attempts   string
		holds, notHolds []int
	}{
		{scenario.Exactly(1), "1", "1 attempt", []int{1}, []int{0, 2}},
		{scenario.Exactly(0), "0", "0 attempts", []int{0}, []int{1}},
		{scenario.Count{}, "0", "0 attempts", []int{0}, []int{1}},
		{scenario.AtMost(1), "at most 1", "at most 1 attempt", []int{0, 1}, []int{2}},
		{scenario.AtMost(2), "at most 2", "at most 2 attempts", []int{0, 2}, []int{3}},
		{scenario.AtLeast(1), "at least 1", "at least 1 attempt", []int{1, 1000}, []int{0}},
		{scenario.Count{Min: 1, Max: 2}, "1 to 2", "1 to 2 attempts", []int{1, 2}, []int{0, 3}},
		{scenario.Count{Min: 0, Max: 1}, "at most 1", "at most 1 attempt", []int{0, 1}, []int{2}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.str, tc.c.String())
		assert.Equal(t, tc.attempts, tc.c.Describe("attempt"))
		for _, n := range tc.holds {
			assert.True(t, tc.c.Holds(n), "%s holds %d", tc.c, n)
		}
		for _, n := range tc.notHolds {
			assert.False(t, tc.c.Holds(n), "%s does not hold %d", tc.c, n)
		}
	}
}

// C7: bounds load as Counts on every count field, an integer stays exactly
// that many, and a bound not met reads naturally beside what happened.
func TestC7_BoundsOnEveryCountField(t *testing.T) {
	sc, err := scenario.Parse("bounds.yaml", []byte(`namespaces: {INVENTORY: inventory, MAIL: mailer}
stubs: {shop: {namespace: INVENTORY}, mail: {namespace: MAIL}}
faults:
  rules:
    - {method: AddOne, attempt: 1, fault: lose-response}
    - {method: Send, attempt: 1, fault: lose-response}
calls:
  - stub: shop
    method: AddOne
    args: [apple]
    expect: {attempts: {max: 1}, executions: {min: 2}, rejected: {min: 2, max: 3}, calls: {max: 1}, effects: {max: 0}}
  - stub: shop
    method: AddOne
    args: [apple]
    outer: 3
    expect: {attempts: {min: 2}, executions: {max: 3}, rejected: {min: 1, max: 3}, calls: {min: 2, max: 3}, effects: 0} # counts add up over the loop
  - stub: mail
    method: Send
    args: [ada@example.com, hi]
    expect: {effects: {min: 1, max: 2}, executions: 2}
expect:
  effects:
    email: {max: 1}
  resets:
    shop: {min: 1}
    mail: {max: 0}
`), builtIns)
	require.NoError(t, err)
	first := sc.Calls()[0].Expect
	require.Len(t, first, 5)
	wants := map[string]any{}
	for _, e := range first {
		wants[e.Kind] = e.Want
	}
	assert.Equal(t, map[string]any{
		scenario.ExpectAttempts:   scenario.AtMost(1),
		scenario.ExpectExecutions: scenario.AtLeast(2),
		scenario.ExpectRejected:   scenario.Count{Min: 2, Max: 3},
		scenario.ExpectCalls:      scenario.AtMost(1),
		scenario.ExpectEffects:    scenario.Exactly(0),
	}, wants)
	assert.Equal(t, scenario.Exactly(2), sc.Calls()[2].Expect[0].Want, "an integer is exactly that many")

	res, err := sc.Run()
	require.NoError(t, err)
	assert.Equal(t, 15, res.Checked)
	var got []string
	for _, f := range res.Failures {
		got = append(got, f.String())
	}
	assert.Equal(t, []string{
		"bounds.yaml:11: calls[0].expect.attempts (INVENTORY/shop.AddOne): expected at most 1 attempt, got 2 attempts",
		"bounds.yaml:11: calls[0].expect.executions (INVENTORY/shop.AddOne): expected at least 2 executions, got 1 execution",
		"bounds.yaml:11: calls[0].expect.rejected (INVENTORY/shop.AddOne): expected 2 to 3 rejections, got 1 rejection",
		"bounds.yaml:25: expect.resets.shop: expected INVENTORY/shop reset at least 1 time, got INVENTORY/shop reset 0 times",
		"bounds.yaml:23: expect.effects.email: expected at most 1 email effect, got 2 email effects",
	}, got)
	assert.Equal(t, "at most 1 attempt", res.Failures[0].Want)
	assert.Equal(t, "2 attempts", res.Failures[0].Got)
}

// C7: an expectation built in Go with an int for a count, as before
// Count, still means exactly that many.
func TestC7_AnIntWantIsAnExactCount(t *testing.T) {
	sc := load(t, "../testdata/scenarios/mailer-vs-ledger.yaml")
	base := slices.Clip(sc.Expect)
	for _, tc := range []struct {
		n    int
		fail string
	}{{n: 2}, {n: 1, fail: "go.yaml:1: go: expected 1 email effect, got 2 email effects"}} {
		sc.Expect = append(base, scenario.Expectation{Line: 1, Path: "go", Kind: scenario.ExpectEffectKind, Key: "email", Want: tc.n})
		sc.File = "go.yaml"
		res, err := sc.Run()
		require.NoError(t, err)
		var got []string
		for _, f := range res.Failures {
			got = append(got, f.String())
		}
		if tc.fail == "" {
			assert.Empty(t, got, "two emails, as expected")
		} else {
			assert.Equal(t, []string{tc.fail}, got)
		}
	}
}

// C7: the explorer reads explore.expect through Result.CheckExplore, which
// honours {max: N}. An overloaded first attempt never reaches the mailer:
// no email, which "at most 1" allows and "exactly 1" does not; a lost
// reply makes the marked Send run twice: two emails, which neither allows.
func TestC7_CheckExploreHonoursMax(t *testing.T) {
	const src = `namespaces: {MAIL: mailer}
stubs: {mail: {}}
calls:
  - {stub: mail, method: Send, args: [ada@example.com, hi]}
explore:
  expect:
    effects: {email: %s}
`
	atMost, err := scenario.Parse("at-most.yaml", []byte(strings.Replace(src, "%s", "{max: 1}", 1)), builtIns)
	require.NoError(t, err)
	exactly, err := scenario.Parse("exactly.yaml", []byte(strings.Replace(src, "%s", "1", 1)), builtIns)
	require.NoError(t, err)
	rule := func(f transport.Fault) scenario.RunOption {
		return scenario.ReplaceFaults(scenario.Faults{Rules: []transport.Rule{{Method: "Send", Attempt: 1, Fault: f}}})
	}
	explore := func(sc *scenario.Scenario, opt scenario.RunOption) []string {
		t.Helper()
		res, err := sc.Run(opt)
		require.NoError(t, err)
		var out []string
		for _, f := range res.CheckExplore() {
			out = append(out, f.String())
		}
		return out
	}
	noFaults := scenario.ReplaceFaults(scenario.Faults{})
	assert.Empty(t, explore(atMost, noFaults), "one email")
	assert.Empty(t, explore(exactly, noFaults), "one email")

	assert.Empty(t, explore(atMost, rule(transport.Overloaded)), "no email: at most 1 holds")
	assert.Equal(t, []string{"exactly.yaml:7: explore.expect.effects.email: expected 1 email effect, got 0 email effects"},
		explore(exactly, rule(transport.Overloaded)), "the exact count fails a legitimate overloaded seed")

	assert.Equal(t, []string{"at-most.yaml:7: explore.expect.effects.email: expected at most 1 email effect, got 2 email effects"},
		explore(atMost, rule(transport.LoseResponse)))
}
