package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// billing keeps a running total; Charge adds to it (not idempotent).
type billing struct{ st *object.State }

func (b *billing) Methods() object.Methods {
	return object.Methods{"Charge": object.Func(func(ctx context.Context, cents int) (int, error) {
		var total int
		if _, err := b.st.Storage().Get(ctx, "total", &total); err != nil {
			return 0, err
		}
		total += cents
		return total, b.st.Storage().Put(ctx, "total", total)
	})}
}

// limiter bills each use through its BILLING binding; Use is marked
// Retryable though a second run charges again: the planted bug.
type limiter struct{ st *object.State }

func (l *limiter) Methods() object.Methods {
	return object.Methods{"Use": object.Retryable(func(ctx context.Context, n int) (int, error) {
		ns, err := runtime.Binding(l.st, "BILLING")
		if err != nil {
			return 0, err
		}
		acct, err := ns.GetByName("acct")
		if err != nil {
			return 0, err
		}
		return stub.CallAs[int](ctx, acct, "Charge", n)
	})}
}

var twoClasses = map[string]runtime.Constructor{
	"limiter": func(st *object.State) object.Object { return &limiter{st: st} },
	"billing": func(st *object.State) object.Object { return &billing{st: st} },
}

const twoClassesYAML = `name: limiter-bills
namespaces:
  LIMITER: limiter
  BILLING: billing
stubs:
  lim: {namespace: LIMITER, object: l}
calls:
  - {stub: lim, method: Use, args: [5]}
`

// Issue 36: a class that calls another (runtime.Binding) runs from a
// scenario file through run, explore and verify: the callee's call is on
// the timeline, and verify finds the marked method that charges twice
// through the callee DANGER, naming the callee's storage.
func TestC6_ASystemOfTwoClassesRunsFromYAML(t *testing.T) {
	f := writeFile(t, "two.yaml", twoClassesYAML)
	code, out, errOut := walletsim(t, twoClasses, "run", f)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "BILLING/acct", "the callee's call is on the timeline")
	assert.Contains(t, out, "Charge (by LIMITER/l)", "as a call the limiter made")

	code, _, errOut = walletsim(t, twoClasses, "explore", f, "--seeds", "20")
	assert.Equal(t, 0, code, errOut) // see TestC1_ABoundCallOutReplaysFromItsReads

	code, out, errOut = walletsim(t, twoClasses, "verify", "--scenario", f, "limiter")
	assert.Equal(t, 1, code, "a dangerous marked method: %s%s", out, errOut)
	assert.Contains(t, out, "DANGER")
	assert.Contains(t, out, `BILLING/acct storage "total": once 5, twice 10`)
}

// C1 (issue 36): the model replays a turn in a runtime of its own, where
// the bound namespace is not defined; the call out is answered from the
// turn's reads. The system of two classes explores clean at the default
// rates (its marked Use charging twice is verify's to find, above): the
// judge cried wolf on 18 seeds of 20 ("the runtime has no namespace
// BILLING", then "BILLING has no methods" when the replay delivered it).
func TestC1_ABoundCallOutReplaysFromItsReads(t *testing.T) {
	f := writeFile(t, "two.yaml", twoClassesYAML)
	code, out, errOut := walletsim(t, twoClasses, "explore", f, "--seeds", "100")
	assert.Equal(t, 0, code, "%s%s", out, errOut)
	assert.Contains(t, out, "100 seeds run")
	assert.Contains(t, out, "clean: no violation")
}

// Issue 36: a scenario file binds a name to a namespace of another name
// (bindings:), as wrangler's durable_objects bindings do: run, explore
// (whose model replays the limiter's turns with the same bindings) and
// verify all see PAYMENTS under the name BILLING.
func TestC6_ABindingNamesANamespaceOfAnotherName(t *testing.T) {
	f := writeFile(t, "bound.yaml", `name: limiter-bills-payments
namespaces:
  LIMITER: {class: limiter, bindings: {BILLING: PAYMENTS}}
  PAYMENTS: billing
stubs:
  lim: {namespace: LIMITER, object: l}
calls:
  - {stub: lim, method: Use, args: [5]}
`)
	code, out, errOut := walletsim(t, twoClasses, "run", f)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "PAYMENTS/acct")
	code, out, errOut = walletsim(t, twoClasses, "explore", f, "--seeds", "50")
	assert.Equal(t, 0, code, "%s%s", out, errOut)
	code, out, _ = walletsim(t, twoClasses, "verify", "--scenario", f, "limiter")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, `PAYMENTS/acct storage "total": once 5, twice 10`)

	bad := writeFile(t, "bad.yaml", `namespaces:
  LIMITER: {class: limiter, bindings: {BILLING: PAYMNTS}}
  PAYMENTS: billing
stubs: {lim: {namespace: LIMITER, object: l}}
calls: [{stub: lim, method: Use, args: [5]}]
`)
	code, _, errOut = walletsim(t, twoClasses, "run", bad)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `namespaces.LIMITER.bindings.BILLING: is "PAYMNTS": no namespace of the file has that name; the namespaces are`)
}

// S15 across a hop (issue 36): amplify runs a class that calls another
// through its binding, the callee defined in every trial (--bind
// NAME=CLASS), and shows the limiter's calls out to BILLING apart from
// the loop's own calls; a bad --bind is a usage error naming it.
func TestS15_AmplifyAClassThatCallsAnother(t *testing.T) {
	code, out, errOut := walletsim(t, twoClasses, "amplify", "--outer", "2", "--class", "limiter", "--method", "Use", "--args", "[5]",
		"--bind", "BILLING=billing", "--fault", "lose-response", "--rate", "0.3", "--trials", "200")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "calls of LIMITER.Use (marked Retryable: every delivery runs it)")
	assert.Regexp(t, `\n  calls out +\d+ +\d+ +\d+ +\d+\.\d\d\n  executions out +\d+`, out)

	code, out, _ = walletsim(t, twoClasses, "amplify", "--outer", "2", "--class", "limiter", "--method", "Use", "--args", "[5]",
		"--fault", "lose-response", "--rate", "0.3", "--trials", "200")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "calls out", "no binding, no row")
	assert.Contains(t, out, "operations that failed all 2 outer attempts: 200 (100.00%)", "without BILLING every Use fails")

	for args, want := range map[string]string{
		"--bind BILLING":                    `walletsim: amplify: --bind "BILLING": want NAME=CLASS, such as BILLING=billing: the binding's name and a registered class`,
		"--bind BILLING=ledger":             `walletsim: amplify: --bind "BILLING=ledger": unknown class "ledger"; the registered classes are billing, limiter`,
		"--bind LIMITER=billing":            `walletsim: amplify: --bind "LIMITER=billing": LIMITER is the namespace of the class the loop calls: name the binding otherwise`,
		"--bind B=billing --bind B=limiter": `walletsim: amplify: --bind: binding "B" given twice`,
	} {
		code, out, errOut := walletsim(t, twoClasses, append([]string{"amplify", "--outer", "2", "--class", "limiter", "--method", "Use", "--args", "[5]"}, strings.Fields(args)...)...)
		assert.Equal(t, 2, code, args)
		assert.Empty(t, out, args)
		assert.Equal(t, want+"\n", errOut, args)
	}
}
