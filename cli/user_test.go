package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/cli"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wallet is a user's class, as a program of theirs would define it:
// Deposit is marked Retryable and safe, by its idempotency key; Withdraw
// has no key and is not marked.
type wallet struct{ st *object.State }

func newWallet(st *object.State) object.Object { return &wallet{st: st} }

func (w *wallet) Methods() object.Methods {
	return object.Methods{
		"Deposit":  object.Retryable(w.Deposit),
		"Withdraw": object.Func(w.Withdraw),
		"Balance":  object.Retryable(w.Balance),
	}
}

// Deposit adds amount once per txID and returns the balance.
func (w *wallet) Deposit(ctx context.Context, txID string, amount int) (int, error) {
	var n int
	err := w.st.Storage().Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
		if _, err := tx.Get(ctx, "balance", &n); err != nil {
			return err
		}
		done, err := tx.Get(ctx, "tx/"+txID, new(bool))
		if err != nil || done {
			return err
		}
		n += amount
		if err := tx.Put(ctx, "balance", n); err != nil {
			return err
		}
		return tx.Put(ctx, "tx/"+txID, true)
	})
	return n, err
}

// Withdraw takes amount out, every time it runs.
func (w *wallet) Withdraw(ctx context.Context, amount int) (int, error) {
	var n int
	if _, err := w.st.Storage().Get(ctx, "balance", &n); err != nil {
		return 0, err
	}
	if n < amount {
		return n, errors.New("insufficient funds")
	}
	n -= amount
	return n, w.st.Storage().Put(ctx, "balance", n)
}

// Balance returns the balance.
func (w *wallet) Balance(ctx context.Context) (int, error) {
	var n int
	_, err := w.st.Storage().Get(ctx, "balance", &n)
	return n, err
}

// sampledWallet is the wallet with samples for verify (object.Sampler).
type sampledWallet struct{ wallet }

func newSampledWallet(st *object.State) object.Object { return &sampledWallet{wallet{st: st}} }

func (w *sampledWallet) VerifySamples() map[string]object.Sample {
	return map[string]object.Sample{
		"Deposit":  {Args: []any{"tx-1", 50}},
		"Withdraw": {Args: []any{20}, Storage: map[string]any{"balance": 50}},
	}
}

const walletYAML = `name: wallet-ambiguous
description: A deposit loses its reply; the retry runs it again, harmlessly.
seed: 7
namespaces:
  WALLET: wallet
stubs:
  alice:
    namespace: WALLET
    object: alice
faults:
  rules:
    - {method: Deposit, attempt: 1, fault: lose-response}
calls:
  - stub: alice
    method: Deposit
    args: [tx-1, 50]
    expect: {outcome: recovered, executions: 2, result: 50}
  - stub: alice
    method: Withdraw
    args: [20]
    expect: {outcome: ok, result: 30}
`

// walletsim runs the command line as a user's walletsim would.
func walletsim(t *testing.T, classes map[string]runtime.Constructor, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(args, cli.WithName("walletsim"), cli.WithClasses(classes), cli.WithOutput(&out, &errb))
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

var wallets = map[string]runtime.Constructor{"wallet": newWallet}

// U2: run and explore work on a class registered with cli.WithClasses,
// under the program's own name.
func TestU2_RunAndExploreOnAUserClass(t *testing.T) {
	f := writeFile(t, "wallet.yaml", walletYAML)
	code, out, errOut := walletsim(t, wallets, "run", f)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
	assert.Contains(t, out, "wallet-ambiguous (seed 7)")
	assert.Contains(t, out, `WALLET/alice  Deposit("tx-1", 50)`)
	assert.Contains(t, out, "lose-response")

	code, out, errOut = walletsim(t, wallets, "run", "--format", "json", f)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"method": "Deposit"`)

	code, out, errOut = walletsim(t, wallets, "explore", f, "--seeds", "50")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "50 seeds run")
	assert.Contains(t, out, "clean: no violation")

	// A planted bug: Deposit marked but without its key check. explore
	// finds it and prints the replay command with the program's name.
	buggy := map[string]runtime.Constructor{"wallet": func(st *object.State) object.Object { return &forgetfulWallet{wallet{st: st}} }}
	code, out, errOut = walletsim(t, buggy, "explore", f, "--seeds", "200", "--shrink-time", "10s")
	require.Equal(t, 1, code, errOut)
	assert.Contains(t, out, "replay: walletsim explore "+f+" --replay ")
	assert.NotContains(t, out, "dosim")

	// The built-in classes are not there, nor is demo.
	code, _, errOut = walletsim(t, wallets, "demo")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `unknown command "demo" for "walletsim"`)
	code, out, _ = walletsim(t, wallets, "--help")
	assert.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "walletsim runs Durable-Object-style objects"), out)
	assert.Contains(t, out, "walletsim [command]")
	code, out, _ = walletsim(t, wallets, "run", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "walletsim run FILE")
	assert.NotContains(t, out, "testdata/scenarios", "the examples are dosim's only in dosim")
	code, out, _ = walletsim(t, wallets, "version")
	assert.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "walletsim "), out)
}

// forgetfulWallet's Deposit is marked Retryable but applies every
// delivery: the mistake explore and verify find.
type forgetfulWallet struct{ wallet }

func (w *forgetfulWallet) Methods() object.Methods {
	return object.Methods{
		"Deposit":  object.Retryable(w.Deposit),
		"Withdraw": object.Func(w.Withdraw),
		"Balance":  object.Retryable(w.Balance),
	}
}

func (w *forgetfulWallet) Deposit(ctx context.Context, txID string, amount int) (int, error) {
	var n int
	if _, err := w.st.Storage().Get(ctx, "balance", &n); err != nil {
		return 0, err
	}
	n += amount
	return n, w.st.Storage().Put(ctx, "balance", n)
}

// U2: bad input about user classes is exit 2 with a message that names
// the file, the field, the value and what is allowed; nothing panics.
func TestU2_BadInputOnUserClasses(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		classes    map[string]runtime.Constructor
		want       string
	}{
		{"unregistered class", strings.Replace(walletYAML, "WALLET: wallet", "WALLET: purse", 1), wallets,
			`:5: namespaces.WALLET: unknown class "purse"; the registered classes are wallet`},
		{"missing method", strings.Replace(walletYAML, "method: Withdraw", "method: Refund", 1), wallets,
			`calls[1].method: unknown method "Refund" of class wallet (namespace WALLET); it has Balance, Deposit, Withdraw`},
		{"argument of the wrong type", strings.Replace(walletYAML, "args: [tx-1, 50]", "args: [tx-1, fifty]", 1), wallets,
			`calls[0].args[1]`},
		{"constructor that panics", walletYAML, map[string]runtime.Constructor{"wallet": func(*object.State) object.Object { panic("no database configured") }},
			"panicked: no database configured"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := writeFile(t, "wallet.yaml", c.yaml)
			for _, cmd := range []string{"run", "explore"} {
				code, out, errOut := walletsim(t, c.classes, cmd, f)
				assert.Equal(t, 2, code, errOut)
				assert.Empty(t, out)
				assert.Contains(t, errOut, c.want)
				assert.True(t, strings.HasPrefix(errOut, f+":"), errOut)
			}
		})
	}
	// verify and amplify on a constructor that panics: exit 2, not a crash.
	panicky := map[string]runtime.Constructor{"wallet": func(*object.State) object.Object { panic("no database configured") }}
	code, _, errOut := walletsim(t, panicky, "verify", "wallet")
	assert.Equal(t, 2, code)
	assert.Equal(t, "walletsim: class wallet: its constructor, given a bare object.State, panicked: no database configured\n", errOut)
	code, _, errOut = walletsim(t, panicky, "amplify", "--outer", "2", "--class", "wallet", "--method", "Deposit", "--args", `["t", 1]`)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "panicked: no database configured")
	// No class registered at all.
	code, _, errOut = walletsim(t, nil, "run", writeFile(t, "w.yaml", walletYAML))
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `unknown class "wallet"`)
}

// Issue 11 item 4: verify on a user class takes its arguments from
// object.Sampler, else from --args, else says how to give them (exit 2).
func TestU2_VerifyOnAUserClass(t *testing.T) {
	code, out, errOut := walletsim(t, map[string]runtime.Constructor{"wallet": newSampledWallet}, "verify")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `CLASS   METHOD    ARGS         MARKED  IDEMPOTENT  VERDICT
wallet  Balance   []           yes     yes         ok
wallet  Deposit   ["tx-1",50]  yes     yes         ok
wallet  Withdraw  [20]         no      no          ok
`, out)

	code, out, errOut = walletsim(t, wallets, "verify", "wallet")
	assert.Equal(t, 2, code)
	assert.Empty(t, out, "nothing is printed before the error")
	assert.Equal(t, "walletsim: verify: wallet.Deposit takes 2 arguments and none were given: pass --args 'Deposit=[...]' (or 'wallet.Deposit=[...]'), "+
		"or have the class give samples by implementing object.Sampler (a method VerifySamples() map[string]object.Sample with an entry for \"Deposit\")\n", errOut)

	code, out, errOut = walletsim(t, wallets, "verify", "--args", `Deposit=["tx-9", 5]`, "--args", "wallet.Withdraw=[0]")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `wallet  Deposit   ["tx-9",5]  yes     yes         ok`)

	// The planted bug is DANGER, exit 1.
	buggy := map[string]runtime.Constructor{"wallet": func(st *object.State) object.Object { return &forgetfulWallet{wallet{st: st}} }}
	code, out, errOut = walletsim(t, buggy, "verify", "--args", `Deposit=["tx-9", 5]`, "--args", "Withdraw=[0]")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, out, "DANGER: marked but not idempotent")

	code, _, errOut = walletsim(t, wallets, "verify", "purse")
	assert.Equal(t, 2, code)
	assert.Equal(t, "walletsim: unknown class \"purse\"; the registered classes are wallet\n", errOut)
}

// U2: amplify on a user class needs --class and --method; arguments come
// from --args or the class's samples.
func TestU2_AmplifyOnAUserClass(t *testing.T) {
	sim := []string{"--fault", "lose-response", "--rate", "0.3", "--trials", "100"}
	code, out, errOut := walletsim(t, wallets, append([]string{"amplify", "--outer", "3", "--class", "wallet", "--method", "Deposit", "--args", `["tx-1", 5]`}, sim...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "each an application loop of up to 3 calls of WALLET.Deposit (marked Retryable: every delivery runs it),")
	code, out, errOut = walletsim(t, map[string]runtime.Constructor{"wallet": newSampledWallet}, append([]string{"amplify", "--outer", "3", "--class", "wallet", "--method", "Withdraw"}, sim...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "calls of WALLET.Withdraw (not marked: a duplicate delivery is refused),")

	// The worst case needs no class.
	code, _, errOut = walletsim(t, wallets, "amplify", "--outer", "3")
	assert.Equal(t, 0, code, errOut)
	for args, want := range map[string]string{
		"--outer 3 " + strings.Join(sim, " "):                                 "walletsim: amplify: --class is required to simulate: name the class whose method the loop calls; the registered classes are wallet\n",
		"--outer 3 --class wallet " + strings.Join(sim, " "):                  "walletsim: amplify: --method is required with --class wallet: one of Balance, Deposit, Withdraw\n",
		"--outer 3 --class wallet --method Refund":                            "walletsim: amplify: --method: class wallet has no method \"Refund\"; it has Balance, Deposit, Withdraw\n",
		"--outer 3 --class purse --method Deposit":                            "walletsim: unknown class \"purse\"; the registered classes are wallet\n",
		"--outer 3 --class wallet --method Deposit " + strings.Join(sim, " "): "walletsim: amplify: wallet.Deposit takes 2 arguments and none were given: pass --args '[...]', or have the class give samples by implementing object.Sampler (a method VerifySamples() map[string]object.Sample with an entry for \"Deposit\")\n",
		"--outer 3 --class wallet --method Deposit --args {":                  "walletsim: amplify: --args: \"{\" is not a JSON array: unexpected end of JSON input\n",
	} {
		code, out, errOut := walletsim(t, wallets, append([]string{"amplify"}, strings.Fields(args)...)...)
		assert.Equal(t, 2, code, args)
		assert.Empty(t, out, args)
		assert.Equal(t, want, errOut, args)
	}
}

// WithClasses merges: several options add up, and WithBuiltInClasses
// beside them brings dosim's classes and demo back.
func TestU2_WithClassesMerges(t *testing.T) {
	var out, errb bytes.Buffer
	code := cli.Main([]string{"verify", "nope"}, cli.WithClasses(wallets),
		cli.WithClasses(map[string]runtime.Constructor{"purse": newSampledWallet}), cli.WithBuiltInClasses(), cli.WithOutput(&out, &errb))
	assert.Equal(t, 2, code)
	assert.Equal(t, "dosim: unknown class \"nope\"; the registered classes are booth, booth-leaky, bucket, chat, chores, counter, inventory, ledger, mailer, outbox, purse, seats, seats-leaky, session, tally, wallet\n", errb.String())
	out.Reset()
	errb.Reset()
	code = cli.Main([]string{"demo"}, cli.WithClasses(wallets), cli.WithBuiltInClasses(), cli.WithOutput(&out, &errb))
	assert.Equal(t, 0, code, errb.String())
}

// Main runs a command line on your own classes: here verify of a class
// that gives its sample arguments (object.Sampler).
func ExampleMain() {
	code := cli.Main([]string{"verify", "wallet"},
		cli.WithName("walletsim"),
		cli.WithClasses(map[string]runtime.Constructor{"wallet": newSampledWallet}),
		cli.WithOutput(os.Stdout, os.Stderr))
	fmt.Println("exit code", code)
	// Output:
	// CLASS   METHOD    ARGS         MARKED  IDEMPOTENT  VERDICT
	// wallet  Balance   []           yes     yes         ok
	// wallet  Deposit   ["tx-1",50]  yes     yes         ok
	// wallet  Withdraw  [20]         no      no          ok
	// exit code 0
}
