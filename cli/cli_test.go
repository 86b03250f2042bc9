package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/internal/buildflags"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// repoRoot is the repository's root, where testdata/ lives.
var repoRoot string

func TestMain(m *testing.M) {
	root, err := filepath.Abs(filepath.Join(".."))
	if err != nil {
		panic(err)
	}
	repoRoot = root
	if err := buildflags.Setenv(); err != nil { // buildDosim's go build
		panic(err)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if dosimBin.dir != "" {
			_ = os.RemoveAll(dosimBin.dir) // buildDosim's binary
		}
		os.Exit(code)
	}))
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(repoRoot, "testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cli -update to create it")
	assert.Equal(t, string(want), string(got))
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// run is the command line of cmd/dosim, writing to stdout and stderr.
func run(args []string, stdout, stderr io.Writer) int {
	return Main(args, WithBuiltInClasses(), WithOutput(stdout, stderr))
}

// runContext is run under ctx, which a test cancels as a signal would.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Main(args, WithBuiltInClasses(), WithOutput(stdout, stderr), WithContext(ctx))
}

// inRoot makes the test run from the repository's root, so that file names
// in outputs read as a user would type them.
func inRoot(t *testing.T) { t.Chdir(repoRoot) }

// The demo is deterministic (rule D1): its timeline matches the golden file.
func TestDemoGoldenD1(t *testing.T) {
	code, out, errOut := runCLI(t, "demo")
	require.Equal(t, 0, code, errOut)
	golden(t, "demo.golden", []byte(out))
	_, again, _ := runCLI(t, "demo")
	assert.Equal(t, out, again)
}

// Every shipped scenario runs, meets its expectations and prints the same
// timeline as its golden file (testdata/scenarios/NAME.golden), twice.
func TestScenarioGoldensD1(t *testing.T) {
	inRoot(t)
	files, err := filepath.Glob("testdata/scenarios/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 8)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			code, out, errOut := runCLI(t, "run", f)
			require.Equal(t, exitOK, code, errOut)
			assert.Empty(t, errOut)
			golden(t, filepath.Join("scenarios", strings.TrimSuffix(filepath.Base(f), ".yaml")+".golden"), []byte(out))
			_, again, _ := runCLI(t, "run", f)
			assert.Equal(t, out, again, "same seed, same output")
			assert.NotContains(t, out, "\x1b[", "no colour off a terminal")
		})
	}
}

// The other formats of the seed's example, and of the demo.
func TestFormatGoldens(t *testing.T) {
	inRoot(t)
	const f = "testdata/scenarios/ambiguous-delivery.yaml"
	for format, ext := range map[string]string{"json": "json", "mermaid": "mmd", "html": "html"} {
		code, out, errOut := runCLI(t, "run", "--format", format, f)
		require.Equal(t, exitOK, code, errOut)
		golden(t, "formats/ambiguous-delivery."+ext, []byte(out))
	}
	code, out, errOut := runCLI(t, "demo", "--format", "html")
	require.Equal(t, exitOK, code, errOut)
	golden(t, "formats/demo.html", []byte(out))
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url("} {
		assert.False(t, strings.Contains(out, bad), "the page loads nothing from the network: it contains %q", bad)
	}
	code, out, _ = runCLI(t, "run", "--color", "always", f)
	require.Equal(t, exitOK, code)
	golden(t, "formats/ambiguous-delivery.ansi", []byte(out))
}

// NO_COLOR and --color never keep colour off even when forced elsewhere.
func TestColorChoice(t *testing.T) {
	assert.True(t, useColor("always", &bytes.Buffer{}))
	assert.False(t, useColor("never", os.Stdout))
	assert.False(t, useColor("auto", &bytes.Buffer{}), "not a terminal")
	t.Setenv("NO_COLOR", "1")
	assert.False(t, useColor("auto", os.Stdout))
}

// Several files: one report each; JSON makes them an array.
func TestRunSeveralFiles(t *testing.T) {
	inRoot(t)
	code, out, errOut := runCLI(t, "run", "--format", "json", "testdata/scenarios/overloaded.yaml", "testdata/scenarios/not-delivered.yaml")
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "[\n"))
	assert.Contains(t, out, `"scenario": "overloaded"`)
	assert.Contains(t, out, `"scenario": "not-delivered-recovery"`)
}

// --seed overrides the scenario's seed.
func TestRunSeed(t *testing.T) {
	inRoot(t)
	code, out, _ := runCLI(t, "run", "--seed", "99", "testdata/scenarios/not-delivered.yaml")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "not-delivered-recovery (seed 99)")
}

// A failed expectation: exit 1, expected beside got.
func TestRunExpectationFailedExits1(t *testing.T) {
	inRoot(t)
	code, out, errOut := runCLI(t, "run", "testdata/cli/failing-expectation.yaml")
	assert.Equal(t, exitExpect, code)
	golden(t, "cli/failing-expectation.golden", []byte(out+"--- stderr\n"+errOut))

	code, out, errOut = runCLI(t, "run", "--format", "json", "testdata/cli/failing-expectation.yaml")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, out, `"expected": "recovered"`)
	assert.Contains(t, errOut, "testdata/cli/failing-expectation.yaml:14: calls[0].expect.outcome (INVENTORY/shop.AddOne): expected recovered, got duplicate-rejected")
}

// The output gate's planted bug (rule L7): VoteFast's reply goes before its
// write is durable, so the caller hears success for a vote that a write
// failure then loses. dosim run fails the developer's expectations, and
// dosim explore reports the L7 invariant; the fixed form explores clean.
func TestL7_OutputGatePlantedBugFailsFixedFormExploresClean(t *testing.T) {
	inRoot(t)
	code, out, errOut := runCLI(t, "run", "testdata/cli/output-gate-unconfirmed.yaml")
	assert.Equal(t, exitExpect, code)
	golden(t, "cli/output-gate-unconfirmed.golden", []byte(out+"--- stderr\n"+errOut))

	code, out, _ = runCLI(t, "explore", "testdata/cli/output-gate-unconfirmed.yaml", "--seeds", "500")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, out, "invariant L7 POLL/mayor: VoteFast")
	assert.Contains(t, out, "the caller saw success (ok) for 1 write that was lost")

	code, out, _ = runCLI(t, "explore", "testdata/scenarios/output-gate.yaml", "--seeds", "500")
	assert.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "clean: no violation")
}

// L2, the planted bug: a caller that keeps one stub (reuse: true) across a
// link error sees its later calls fail broken-stub, never reaching the
// object; its expectation that the read works fails (exit 1). The timeline
// and the JSON show the outcome.
func TestL2_BrokenStubScenarioFailsItsExpectations(t *testing.T) {
	inRoot(t)
	code, out, errOut := runCLI(t, "run", "testdata/cli/broken-stub.yaml")
	assert.Equal(t, exitExpect, code)
	golden(t, "cli/broken-stub.golden", []byte(out+"--- stderr\n"+errOut))
	assert.Contains(t, out, "broken-stub")
	assert.Contains(t, out, "expectations: 2 of 8 NOT met", "the met broken-stub expectations are counted too")

	code, out, _ = runCLI(t, "run", "--format", "json", "testdata/cli/broken-stub.yaml")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, out, `"outcome": "broken-stub"`)
}

// Resets, the planted bug (rule L3): a reset after Deposit wrote, and the
// caller's own loop deposits again: without a key the money arrives twice,
// and the developer's expectation fails (exit 1), while Transfer, retried
// the same way with its key, moves the money once. The fixed form,
// reset-during-transfer.yaml, explores clean with resets drawn at random.
func TestL3_ResetRetryWithoutKeyFailsFixedFormExploresClean(t *testing.T) {
	inRoot(t)
	code, out, errOut := runCLI(t, "run", "testdata/cli/reset-retry-without-key.yaml")
	assert.Equal(t, exitExpect, code)
	golden(t, "cli/reset-retry-without-key.golden", []byte(out+"--- stderr\n"+errOut))
	assert.Contains(t, out, `expected: BANK/main "balance/alice" = 70`)
	assert.Contains(t, out, `got:      BANK/main "balance/alice" = 170`)

	code, out, _ = runCLI(t, "explore", "testdata/scenarios/reset-during-transfer.yaml", "--seeds", "1000")
	assert.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "reset=0.05")
	assert.Contains(t, out, "clean: no violation")
}

// Bad input: exit 2, FILE:LINE: field: message, and nothing runs, even for
// the good files named beside the bad one.
func TestRunBadInputExits2(t *testing.T) {
	inRoot(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("namespaces:\n  INVENTORY: inventori\nstubs: {shop: {}}\ncalls: [{stub: shop, method: Get}]\n"), 0o644))
	code, out, errOut := runCLI(t, "run", "testdata/scenarios/overloaded.yaml", bad)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out, "nothing runs")
	assert.Equal(t, bad+`:2: namespaces.INVENTORY: unknown class "inventori" (did you mean "inventory"?); the built-in classes are booth, booth-leaky, bucket, chat, chores, counter, inventory, ledger, mailer, outbox, seats, seats-leaky, session, tally`+"\n", errOut)

	code, out, errOut = runCLI(t, "run", filepath.Join(dir, "missing.yaml"))
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "missing.yaml: no such file or directory")

	for _, args := range [][]string{
		{"run"},
		{"run", "--format", "pdf", "testdata/scenarios/overloaded.yaml"},
		{"run", "--color", "sometimes", "testdata/scenarios/overloaded.yaml"},
		{"demo", "--format", "svg"},
	} {
		code, out, errOut := runCLI(t, args...)
		assert.Equal(t, exitUsage, code, args)
		assert.Empty(t, out, args)
		assert.NotEmpty(t, errOut, args)
	}
}

func TestAmplify(t *testing.T) {
	code, out, errOut := runCLI(t, "amplify", "--outer", "3")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "Worst case (rule S15): 3 outer attempts × (4 retries + 1) = 15 attempts can reach the object for one operation.\n"+
		"Add --fault F --rate P to simulate how often that happens.\n", out)

	code, out, errOut = runCLI(t, "amplify", "--outer", "3", "--fault", "lose-response", "--rate", "0.3", "--trials", "2000")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "amplify: 2000 trials to run; progress every 10s\n", errOut, "off a terminal, plain progress lines, no bar")
	golden(t, "cli/amplify.golden", []byte(out))
}

func TestAmplifyBadFlags(t *testing.T) {
	for args, want := range map[string]string{
		"":                                  "dosim: amplify: --outer is required: the number of attempts of the application's own loop (1 to 100)\n",
		"--outer 0":                         "dosim: amplify: --outer: 0 is out of range: want an integer from 1 to 100\n",
		"--outer 3 --max-retries 11":        "dosim: amplify: stub option maxRetries: 11 is out of range: retry.maxRetries must be an integer between 0 and 10\n",
		"--outer 3 --timeout-ms 100":        "dosim: amplify: stub option timeoutMs: 100 is out of range: retry.timeoutMs must be an integer between 500 and 60000\n",
		"--outer 3 --fault lose-response":   "dosim: amplify: --fault and --rate go together: name the fault and its probability per attempt\n",
		"--outer 3 --fault lost --rate 0.5": `dosim: amplify: --fault: unknown fault "lost"; allowed are not-delivered, lose-request, lose-while-running, lose-response, overloaded, fail-after-delivery, reset, storage-write-fails` + "\n",
		"--outer 3 --fault lose-request --rate 1.5":            "dosim: amplify: --rate: 1.5 is out of range: want a probability above 0, at most 1\n",
		"--outer 3 --fault lose-request --rate 0.5 --trials 0": "dosim: amplify: --trials: 0 is out of range: want an integer from 1 to 10000000\n",
		"--outer 3 --method Get":                               `dosim: amplify: --method: "Get": allowed are SetQuantity (marked Retryable) and AddOne (not marked)` + "\n",
		"--outer x":                                            `dosim: invalid argument "x" for "--outer" flag: strconv.ParseInt: parsing "x": invalid syntax` + "\n",
	} {
		code, out, errOut := runCLI(t, append([]string{"amplify"}, strings.Fields(args)...)...)
		assert.Equal(t, exitUsage, code, args)
		assert.Empty(t, out, args)
		assert.Equal(t, want, errOut, args)
	}
}

func TestVersionAndUsage(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	assert.Equal(t, 0, code)
	assert.Equal(t, "dosim dev\n", out)

	code, _, errOut := runCLI(t, "nonsense")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unknown command "nonsense"`)

	code, _, errOut = runCLI(t, "demo", "--seed", "x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `invalid argument "x" for "--seed"`)
}

// Every command has --help, and it lists the exit codes, with what exit
// code 1 means for that command.
func TestHelpEverywhereListsExitCodes(t *testing.T) {
	for cmd, one := range map[string]string{
		"":              "run: an expectation failed; explore: a violation was found;\n     verify: a method marked Retryable is not idempotent",
		"run":           "an expectation failed",
		"explore":       "a violation was found (an S-rule invariant",
		"explore merge": "a shard found a violation",
		"verify":        "a method marked Retryable is not idempotent (DANGER)",
		"amplify":       "the method's code stopped a trial",
		"demo":          "(not used by this command)",
		"version":       "(not used by this command)",
	} {
		code, out, errOut := runCLI(t, append(strings.Fields(cmd), "--help")...)
		assert.Equal(t, exitOK, code, cmd)
		assert.Empty(t, errOut)
		assert.Contains(t, out, "Exit codes:\n  0  ok\n  1  "+one, cmd)
		assert.Contains(t, out, "\n  2  a usage or input error", cmd)
	}
}

// docs/run.md shows the timeline of make run: it must be the real one.
func TestReadmeShowsMakeRunTimeline(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "docs", "run.md"))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "scenarios", "ambiguous-delivery.golden"))
	require.NoError(t, err)
	const intro = "$ make run\ngo run -tags dosim_nosql ./cmd/dosim run testdata/scenarios/ambiguous-delivery.yaml\n"
	assert.Contains(t, string(readme), intro+string(want)+"```\n", "paste the timeline of make run into docs/run.md")
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	require.NoError(t, err)
	assert.Contains(t, string(makefile), "\t$(GO) run -tags dosim_nosql ./cmd/dosim run testdata/scenarios/ambiguous-delivery.yaml\n")
}
