package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ambiguous = "../testdata/scenarios/ambiguous-delivery.yaml"

func TestExploreClean(t *testing.T) {
	code, out, errOut := runCLI(t, "explore", ambiguous, "--seeds", "500")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "500 seeds run; 498 of 498 object histories checked for linearizability (100%)", "mix: two swarm seeds reach no object")
	assert.Contains(t, out, "faults fired, by method and stage:\n  AddOne: at a write: storage-write-fails ")
	assert.Regexp(t, `rule paths: recovered \d+ \(S3\), duplicate-rejected \d+ \(S6\), marked-rerun \d+ \(S6\)`, out)
	assert.Contains(t, out, "clean: no violation")
}

func TestExploreFindsTheMailerAndReplays(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "explore", "../testdata/scenarios/mailer-vs-ledger.yaml", "--seeds", "200", "--artifacts", dir)
	require.Equal(t, exitExpect, code, errOut)
	assert.Contains(t, out, "linearizability MAIL/newsletter")
	assert.Contains(t, out, "first failing seed 1: 10 fault(s) drawn, shrunk to 1:\nit ran swarm, its profile: ")
	assert.Contains(t, out, "- {call: 1, method: Send, attempt: 1, fault: lose-response}")
	assert.Contains(t, out, "replay: dosim explore ../testdata/scenarios/mailer-vs-ledger.yaml --replay 1 --rates "+defaultRates+" --latency p50=2ms,p99=100ms --swarm --strategy random\n")
	for _, f := range []string{"timeline.html", "linearizability-MAIL-newsletter.html", "faults.yaml", "replay.txt", "violations.txt"} {
		_, err := os.Stat(filepath.Join(dir, f))
		assert.NoError(t, err, f)
	}

	code, out, _ = runCLI(t, "explore", "../testdata/scenarios/mailer-vs-ledger.yaml", "--replay", "1")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, out, "lose-response")
	assert.Contains(t, out, "seed 1 (its own run: the 10 faults it drew) violates:")
	// The replay line's flags (the strategy the mix drew for seed 3) run
	// the same run, byte for byte, as the mix's own replay of the seed.
	_, same, _ := runCLI(t, "explore", "../testdata/scenarios/mailer-vs-ledger.yaml", "--replay", "1", "--rates", defaultRates, "--latency", "p50=2ms,p99=100ms", "--swarm", "--strategy", "random")
	assert.Equal(t, out, same)
	code, out, _ = runCLI(t, "explore", "../testdata/scenarios/mailer-vs-ledger.yaml", "--replay", "2")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "seed 2 (its own run: the 1 fault it drew): no violation")
}

func TestExploreShardsAndMerge(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, sh := range []string{"0/2", "1/2"} {
		f := filepath.Join(dir, "shard-"+sh[:1]+".json")
		code, _, errOut := runCLI(t, "explore", ambiguous, "--seeds", "100", "--shard", sh, "--json", f)
		require.Equal(t, exitOK, code, errOut)
		files = append(files, f)
	}
	code, out, errOut := runCLI(t, append([]string{"explore", "merge"}, files...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "100 seeds run")
	assert.Contains(t, out, "2 shards merged")

	code, out, errOut = runCLI(t, "explore", "merge", files[0])
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "missing shards (1): 1/2")
	assert.Contains(t, errOut, "1 of 2 shards missing (1/2): the sweep is incomplete (--allow-incomplete accepts it)")
	assert.NotContains(t, out, "clean: no violation")
	code, out, _ = runCLI(t, "explore", "merge", "--allow-incomplete", files[0])
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "incomplete: no violation in the 50 seeds that ran, but not every seed was checked")
	code, out, _ = runCLI(t, "explore", "merge", "--partial", files[0])
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "use --allow-incomplete")
}

func TestExploreBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"explore", ambiguous, "--shard", "2/2"}, `--shard: explore options: shard "2/2": want 0 <= I < N`},
		{[]string{"explore", ambiguous, "--rates", "lose-reply=0.1"}, `--rates: unknown fault "lose-reply"; allowed are not-delivered`},
		{[]string{"explore", ambiguous, "--rates", "lose-request=2"}, "--rates: lose-request=2: want a rate, a number from 0 to 1"},
		{[]string{"explore", ambiguous, "--rates", "lose-request"}, `--rates: "lose-request": want FAULT=RATE`},
		{[]string{"explore", ambiguous, "--rates", "lose-request=0.6,overloaded=0.6"}, "random rates add up to 1.2, must be at most 1"},
		{[]string{"explore", ambiguous, "--seeds", "-5"}, "--seeds -5: want 1 or more seeds"},
		{[]string{"explore", ambiguous, "--max-ambiguous", "99"}, "--max-ambiguous 99: want 1 to 20"},
		{[]string{"explore", "nope.yaml"}, "nope.yaml"},
		{[]string{"explore", "merge", "nope.json"}, "open nope.json"},
		{[]string{"verify", "teapot"}, `unknown class "teapot"; the built-in classes are booth, booth-leaky, bucket, chat, chores, counter, inventory, ledger, mailer, outbox, seats, seats-leaky, session, tally`},
		{[]string{"verify", "inventory", "--args", "SetQuantity"}, `--args "SetQuantity": want METHOD=JSON-ARRAY`},
		{[]string{"verify", "inventory", "--args", "SetQuantity=[apple"}, "--args SetQuantity: \"[apple\" is not a JSON array"},
		{[]string{"verify", "inventory", "--args", `SetQuantity=["apple", "three"]`}, `dosim: --args SetQuantity: inventory.SetQuantity(string, int): argument 2: "three" (a string) is of the wrong type: want an integer`},
	}
	for _, tc := range cases {
		code, _, errOut := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"scenario": 3}`), 0o644))
	code, _, errOut := runCLI(t, "explore", "merge", bad)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "explore merge: "+bad+": json: cannot unmarshal number")
}

func TestVerify(t *testing.T) {
	code, out, errOut := runCLI(t, "verify", "mailer", "ledger")
	assert.Equal(t, exitExpect, code, "the mailer is DANGER: %s", errOut)
	golden(t, "cli/verify.golden", []byte(out))

	code, out, _ = runCLI(t, "verify", "ledger")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "ledger  Transfer  [\"order-42\",\"alice\",\"bob\",30]  yes     yes         ok")

	code, out, _ = runCLI(t, "verify", "inventory", "--args", `SetQuantity=["pear", 7]`, "--diff")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, `SetQuantity  ["pear",7]`)
	assert.Contains(t, out, "inventory.AddOne, once vs twice:")

	code, out, _ = runCLI(t, "verify", "mailer", "--scenario", "../testdata/scenarios/mailer-vs-ledger.yaml")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, out, `"Your order has shipped"`)
}

// O3 (issue 31): --interleaving names turns meant to interleave at their
// awaits; a name the scenario's classes do not have is refused, naming
// the flag's value and what is allowed, and a sweep's replay line carries
// the flag.
func TestO3_ExploreInterleavingFlag(t *testing.T) {
	code, _, errOut := runCLI(t, "explore", ambiguous, "--seeds", "10", "--interleaving", "Nope")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `interleaving "Nope": want a method of a namespace's class of `+ambiguous)
	code, out, errOut := runCLI(t, "explore", "../testdata/scenarios/mailer-vs-ledger.yaml", "--seeds", "200", "--no-shrink", "--interleaving", "Send,MAIL.Sent")
	require.Equal(t, exitExpect, code, errOut)
	assert.Regexp(t, `replay: dosim explore \S+ --replay \d+ .* --interleaving MAIL\.Sent,Send\n`, out)
}
