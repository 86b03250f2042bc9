package scenario_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// head is a valid start of a scenario that bad inputs continue.
const head = `namespaces:
  INVENTORY: inventory
stubs:
  shop: {namespace: INVENTORY}
`

// Every bad input is refused with FILE:LINE: field: what is wrong and what
// is allowed, and nothing is returned to run.
func TestBadInputMessages(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string // each line of the error
		is         error
	}{
		{"malformed YAML", head + "calls: [\n",
			[]string{"bad.yaml:5: yaml: did not find expected node content (the file is not valid YAML)"}, nil},
		{"tab indentation", "namespaces:\n\tINVENTORY: inventory\n",
			[]string{"bad.yaml:2: yaml: found character that cannot start any token (the file is not valid YAML)"}, nil},
		{"empty file", "",
			[]string{"bad.yaml:1: file: empty: a scenario is a mapping with namespaces, stubs and calls (see docs/scenarios.md)"}, nil},
		{"not a mapping", "- a\n- b\n",
			[]string{"bad.yaml:1: file: is a list: want a mapping of name, description, seed, eviction, namespaces, stubs, faults, calls, expect, explore"}, nil},
		{"two documents", head + "calls: [{stub: shop, method: Get, args: [a]}]\n---\nseed: 2\n",
			[]string{"bad.yaml:6: file: a second YAML document: a scenario file holds one document"}, nil},
		{"unknown top-level field", "seeed: 3\n" + head + "calls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{"bad.yaml:1: seeed: unknown field (did you mean \"seed\"?); allowed are name, description, seed, eviction, namespaces, stubs, faults, calls, expect, explore"}, nil},
		{"missing fields", "seed: 3\n",
			[]string{
				"bad.yaml:1: namespaces: missing: this field is required",
				"bad.yaml:1: stubs: missing: this field is required",
				"bad.yaml:1: calls: missing: this field is required",
			}, nil},
		{"seed not a number", "seed: seven\n" + head + "calls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:1: seed: is a string ("seven"): want an integer from 0 to 18446744073709551615`}, nil},
		{"negative seed", "seed: -1\n" + head + "calls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:1: seed: is an integer (-1): want an integer from 0 to 18446744073709551615`}, nil},
		{"namespace storage unknown (L8)", "namespaces:\n  INVENTORY: {class: inventory, storage: kv}\nstubs:\n  shop: {namespace: INVENTORY, object: a}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:2: namespaces.INVENTORY.storage: is "kv": want sqlite (the default: a class declared with new_sqlite_classes) or key-value (new_classes)`}, nil},
		{"namespace mapping without a class (L8)", "namespaces:\n  INVENTORY: {storage: key-value}\nstubs:\n  shop: {namespace: INVENTORY, object: a}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:2: namespaces.INVENTORY.class: missing: this field is required`}, nil},
		{"namespace mapping with an unknown field (L8)", "namespaces:\n  INVENTORY: {class: inventory, backend: key-value}\nstubs:\n  shop: {namespace: INVENTORY, object: a}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:2: namespaces.INVENTORY.backend: unknown field; allowed are class, storage, bindings`}, nil},
		{"bindings not a mapping", "namespaces:\n  INVENTORY: {class: inventory, bindings: [LEDGER]}\nstubs:\n  shop: {namespace: INVENTORY, object: a}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:2: namespaces.INVENTORY.bindings: is a list: want a mapping of BINDING: namespace (a namespace of the file)`}, nil},
		{"binding to no namespace", "namespaces:\n  INVENTORY: {class: inventory, bindings: {LEDGER: LEDGR}}\nstubs:\n  shop: {namespace: INVENTORY, object: a}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:2: namespaces.INVENTORY.bindings.LEDGER: is "LEDGR": no namespace of the file has that name; the namespaces are INVENTORY`}, nil},
		{"unknown class", "namespaces:\n  INVENTORY: invntory\nstubs:\n  shop: {}\ncalls: [{stub: shop, method: Get}]\n",
			[]string{
				`bad.yaml:2: namespaces.INVENTORY: unknown class "invntory" (did you mean "inventory"?); the built-in classes are booth, booth-leaky, bucket, chat, chores, counter, inventory, ledger, mailer, outbox, seats, seats-leaky, session, tally`,
			}, nil},
		{"bad args beside a bad expect", head + "calls:\n  - stub: shop\n    method: AddOne\n    args: [1, 2, 3]\n    expect: {outcome: okk}\n",
			[]string{
				"bad.yaml:7: calls[0].args: AddOne(string) takes 1 argument(s), got 3",
				`bad.yaml:9: calls[0].expect.outcome: unknown outcome "okk" (did you mean "ok"?); allowed are ok, recovered, duplicate-rejected, attempts-exhausted, timeout, not-retryable, not-replayable, cancelled, broken-stub`,
			}, nil},
		{"did you mean", head + "faults:\n  rules: [{fault: lose-reponse}]\ncalls:\n  - {stub: shop, method: AddOen, args: [a]}\n",
			[]string{
				`bad.yaml:6: faults.rules[0].fault: unknown fault "lose-reponse" (did you mean "lose-response"?); allowed are none, not-delivered, lose-request, lose-while-running, lose-response, overloaded, fail-after-delivery, reset, storage-write-fails`,
				`bad.yaml:8: calls[0].method: unknown method "AddOen" (did you mean "AddOne"?) of class inventory (namespace INVENTORY); it has AddOne, Get, SetQuantity`,
			}, nil},
		{"duplicate field", head + "calls:\n  - stub: shop\n    method: Get\n    method: AddOne\n    args: [a]\n",
			[]string{"bad.yaml:8: calls[0].method: given twice (first at line 7); give each field once"}, nil},
		{"unknown stub field", "namespaces:\n  INVENTORY: inventory\nstubs:\n  shop: {namespace: INVENTORY, retries: 3}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{"bad.yaml:4: stubs.shop.retries: unknown field; allowed are namespace, object, options, reuse"}, nil},
		{"option of the wrong type", "namespaces:\n  INVENTORY: inventory\nstubs:\n  shop:\n    options: {maxRetries: three}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:5: stubs.shop.options.maxRetries: "three" (a string) is of the wrong type: Incorrect type for the 'maxRetries' field on 'RetryOptions': the provided value is not of type 'number'.`}, stub.ErrType},
		{"option out of range", "namespaces:\n  INVENTORY: inventory\nstubs:\n  shop:\n    options:\n      maxRetries: 11\n      timeoutMs: 100\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{
				"bad.yaml:6: stubs.shop.options.maxRetries: 11 is out of range: retry.maxRetries must be an integer between 0 and 10",
				"bad.yaml:7: stubs.shop.options.timeoutMs: 100 is out of range: retry.timeoutMs must be an integer between 500 and 60000",
			}, stub.ErrRange},
		{"option not an integer", "namespaces:\n  INVENTORY: inventory\nstubs:\n  shop:\n    options: {maxRetries: 2.5}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{"bad.yaml:5: stubs.shop.options.maxRetries: 2.5 is out of range: retry.maxRetries must be an integer between 0 and 10"}, stub.ErrRange},
		{"unknown option", "namespaces:\n  INVENTORY: inventory\nstubs:\n  shop:\n    options: {retries: 2}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{"bad.yaml:5: stubs.shop.options.retries: unknown field; allowed are maxRetries, timeoutMs, retry"}, nil},
		{"unknown namespace", "namespaces:\n  A: inventory\n  B: counter\nstubs:\n  shop: {namespace: C}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{
				`bad.yaml:5: stubs.shop.namespace: unknown namespace "C"; defined are A, B`,
			}, nil},
		{"unknown method", head + "calls:\n  - {stub: shop, method: AddTwo, args: [apple]}\n",
			[]string{`bad.yaml:6: calls[0].method: unknown method "AddTwo" of class inventory (namespace INVENTORY); it has AddOne, Get, SetQuantity`}, nil},
		{"wrong number of arguments", head + "calls:\n  - {stub: shop, method: AddOne, args: [apple, 2]}\n",
			[]string{`bad.yaml:6: calls[0].args: AddOne(string) takes 1 argument(s), got 2`}, nil},
		{"argument of the wrong type", head + "calls:\n  - {stub: shop, method: SetQuantity, args: [apple, three]}\n",
			[]string{`bad.yaml:6: calls[0].args[1]: SetQuantity(string, int): argument 2: "three" (a string) is of the wrong type: want an integer`}, nil},
		{"unknown stub", head + "calls:\n  - {stub: shp, method: Get, args: [a]}\n",
			[]string{`bad.yaml:6: calls[0].stub: unknown stub "shp" (did you mean "shop"?); defined are shop`}, nil},
		{"unknown call field", head + "calls:\n  - {stub: shop, method: Get, args: [a], retries: 2}\n",
			[]string{"bad.yaml:6: calls[0].retries: unknown field; allowed are stub, method, args, fetch, at, outer, expect"}, nil},
		{"call without a method", head + "calls:\n  - {stub: shop}\n",
			[]string{"bad.yaml:6: calls[0].method: missing: a call needs a method (or a fetch)"}, nil},
		{"fetch on a class without a handler", head + "calls:\n  - {stub: shop, fetch: {path: /a}}\n",
			[]string{"bad.yaml:6: calls[0].fetch: class inventory has no fetch handler (it is not an http.Handler); classes with one: bucket, chat"}, nil},
		{"bad fetch method and path", "namespaces: {F: bucket}\nstubs: {b: {}}\ncalls:\n  - stub: b\n    fetch: {method: FETCH, path: cat.txt}\n",
			[]string{
				`bad.yaml:5: calls[0].fetch.method: "FETCH" is not an HTTP method; allowed are GET, HEAD, POST, PUT, PATCH, DELETE`,
				`bad.yaml:5: calls[0].fetch.path: "cat.txt" is not a path: want one starting with /, such as /cat.jpg`,
			}, nil},
		{"bad duration", head + "calls:\n  - {stub: shop, method: Get, args: [a], at: 5}\n  - {stub: shop, method: Get, args: [a], at: soon}\n  - sleep: -1s\n",
			[]string{
				"bad.yaml:6: calls[0].at: is an integer (5): want a duration such as 0, 250ms, 1.5s or 2m",
				`bad.yaml:7: calls[1].at: "soon" is not a duration: want a duration such as 0, 250ms, 1.5s or 2m`,
				"bad.yaml:8: calls[2].sleep: -1s is out of range: want a duration from 0 to 1h0m0s",
			}, nil},
		{"outer out of range", head + "calls:\n  - {stub: shop, method: Get, args: [a], outer: 0}\n",
			[]string{"bad.yaml:6: calls[0].outer: 0 is out of range: want an integer from 1 to 100"}, nil},
		{"unknown fault", head + "faults:\n  rules:\n    - {method: AddOne, fault: lose-reply}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:7: faults.rules[0].fault: unknown fault "lose-reply"; allowed are none, not-delivered, lose-request, lose-while-running, lose-response, overloaded, fail-after-delivery, reset, storage-write-fails`}, transport.ErrUnknownFault},
		{"a rule naming a connection fault (rule W5)", head + "faults:\n  rules:\n    - {method: AddOne, fault: drop-connection}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{`bad.yaml:7: faults.rules[0].fault: drop-connection strikes a WebSocket connection, not an attempt: give it a rate per message under faults.random; a rule names one of none, not-delivered, lose-request, lose-while-running, lose-response, overloaded, fail-after-delivery, reset, storage-write-fails`}, transport.ErrInvalid},
		{"rule naming unknown things", head + "faults:\n  rules:\n    - {namespace: INV, object: shp, method: AddTwo, attempt: 12}\n    - {method: Get}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{
				`bad.yaml:7: faults.rules[0].namespace: unknown namespace "INV"; defined are INVENTORY`,
				`bad.yaml:7: faults.rules[0].object: "shp" is not the object of any stub; the stubs' objects are shop`,
				`bad.yaml:7: faults.rules[0].method: unknown method "AddTwo"; the namespaces' classes have AddOne, Get, SetQuantity`,
				"bad.yaml:7: faults.rules[0].attempt: 12 is out of range: want an integer from 1 to 11",
				"bad.yaml:8: faults.rules[1]: a rule needs a fault, a delay or both",
			}, nil},
		{"bad random rates", head + "faults:\n  random: {lose-request: 1.5, none: 0.1, lose-response: x}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{
				"bad.yaml:6: faults.random.lose-request: 1.5 is out of range: want a number from 0 to 1",
				`bad.yaml:6: faults.random.none: unknown fault "none"; allowed are not-delivered, lose-request, lose-while-running, lose-response, overloaded, fail-after-delivery, reset, storage-write-fails, drop-connection`,
				`bad.yaml:6: faults.random.lose-response: is a string ("x"): want a rate, a number from 0 to 1`,
			}, nil},
		{"rates adding up to more than 1", head + "faults:\n  random: {lose-request: 0.6, lose-response: 0.6}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{"bad.yaml:6: faults.random: the rates add up to 1.2: they may add up to at most 1"}, nil},
		{"bad expectations", head + "calls:\n  - stub: shop\n    method: Get\n    args: [a]\n    expect: {outcome: fine, attempts: -1, status: 200, error: {retryable: yes}, executed: 1}\n",
			[]string{
				"bad.yaml:9: calls[0].expect.executed: unknown field; allowed are outcome, attempts, executions, rejected, calls, effects, result, status, body, error, duration",
				`bad.yaml:9: calls[0].expect.outcome: unknown outcome "fine"; allowed are ok, recovered, duplicate-rejected, attempts-exhausted, timeout, not-retryable, not-replayable, cancelled, broken-stub`,
				"bad.yaml:9: calls[0].expect.attempts: -1 is out of range: want an integer from 0 to 11",
				"bad.yaml:9: calls[0].expect.status: only a fetch has a status; expect a method's result",
				`bad.yaml:9: calls[0].expect.error.retryable: is a string ("yes"): want true or false`,
			}, nil},
		{"bad end expectations", head + "calls: [{stub: shop, method: Get, args: [a]}]\nexpect:\n  storage:\n    - {stub: shop, key: apple}\n    - {stub: shop, key: pear, value: 1, absent: true}\n  effects: {email: many}\n",
			[]string{
				"bad.yaml:8: expect.storage[0].value: missing: give the value expected, or absent: true",
				"bad.yaml:9: expect.storage[1].absent: give a value or absent: true, not both",
				`bad.yaml:10: expect.effects.email: is a string ("many"): want an integer from 0 to 1000000 (exactly that many), or {min: N}, {max: N} or both`,
			}, nil},
		{"bad SQL expectations", head + "calls: [{stub: shop, method: Get, args: [a]}]\nexpect:\n  sql:\n    - {stub: nope, query: SELECT 1, rows: [[1]]}\n    - {stub: shop, rows: [1, [2]]}\n    - {stub: shop, query: SELECT 1, args: [[1]], rows: [[{a: 1}]]}\n    - {stub: shop, query: SELECT 1}\n    - {stub: shop, query: SELECT 1, rows: many}\n",
			[]string{
				`bad.yaml:8: expect.sql[0].stub: unknown stub "nope"; defined are shop`,
				"bad.yaml:9: expect.sql[1].query: missing: this field is required",
				"bad.yaml:9: expect.sql[1].rows[0]: is an integer (1): want a list of values, one per column of the query",
				"bad.yaml:10: expect.sql[2].args[0]: is a list: want a number, a string, a bool or null",
				"bad.yaml:10: expect.sql[2].rows[0][0]: is a mapping: want a number, a string or null (SQLite's values)",
				"bad.yaml:11: expect.sql[3].rows: missing: this field is required",
				`bad.yaml:12: expect.sql[4].rows: is a string ("many"): want a list of rows, each a list of the values of its columns: [[1, alice], [2, bob]], or [] for none`,
			}, nil},
		{"alias bomb", "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
			"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n" +
			"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n",
			[]string{"bad.yaml:1: yaml: document contains excessive aliasing (the file is not valid YAML)"}, nil},
		{"explore block", head + "calls: [{stub: shop, method: Get, args: [a]}]\nexplore:\n  random: {lose-reply: 0.1, lose-request: 2}\n  expect: {storage: [{stub: nope, key: a, value: 1}]}\n  seeds: 10\n",
			[]string{
				"bad.yaml:9: explore.seeds: unknown field; allowed are random, latency, expect, horizon, recurring-alarms, strategy, depth, swarm, exhaustive, max-faults, interleaving",
				`bad.yaml:7: explore.random.lose-reply: unknown fault "lose-reply"; allowed are not-delivered, lose-request, lose-while-running, lose-response, overloaded, fail-after-delivery, reset, storage-write-fails, drop-connection`,
				"bad.yaml:7: explore.random.lose-request: 2 is out of range: want a number from 0 to 1",
				`bad.yaml:8: explore.expect.storage[0].stub: unknown stub "nope"; defined are shop`,
			}, nil},
		{"rule call out of range", head + "faults: {rules: [{call: 0, fault: lose-request}]}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{"bad.yaml:5: faults.rules[0].call: 0 is out of range: want an integer from 1 to 1000000"}, nil},
		{"merge keys", "namespaces:\n  INVENTORY: inventory\nbase: &b {namespace: INVENTORY}\nstubs:\n  shop: {<<: *b}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
			[]string{
				"bad.yaml:3: base: unknown field; allowed are name, description, seed, eviction, namespaces, stubs, faults, calls, expect, explore",
				`bad.yaml:5: stubs.shop."<<": merge keys are not supported; write the fields out`,
			}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := requireInvalid(t, tc.yaml, tc.want)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// requireInvalid parses yaml as bad.yaml and requires it refused with the
// lines of want, as a *scenario.Error wrapping ErrInvalid; it returns the
// error.
func requireInvalid(t *testing.T, yaml string, want []string) error {
	t.Helper()
	sc, err := scenario.Parse("bad.yaml", []byte(yaml), builtIns)
	require.Error(t, err)
	assert.Nil(t, sc, "nothing to run")
	assert.Equal(t, strings.Join(want, "\n"), err.Error())
	assert.ErrorIs(t, err, scenario.ErrInvalid)
	var e *scenario.Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, "bad.yaml", e.File)
	return err
}
