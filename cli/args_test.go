package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule H2: amplify --args that do not fit the method ([1,"x"] for
// (string, int), too many, null, a fraction for an int) exited 0 with a
// table of operations that all failed; they are refused before any trial
// runs, with the same check and message as verify, which refuses them
// too (before, only once its first run failed), and as a scenario's calls.
func TestH2_AmplifyAndVerifyCheckArgsAlike(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{`[1,"x"]`, `inventory.SetQuantity(string, int): argument 1: 1 (an integer) is of the wrong type: want a string`},
		{`["x",1,2]`, `inventory.SetQuantity(string, int) takes 2 argument(s), got 3`},
		{`[]`, `inventory.SetQuantity(string, int) takes 2 argument(s), got 0`},
		{`null`, `"null" is not a JSON array: want the method's arguments as one, such as ["apple", 3] ([] for none)`},
		{`{"a": 1}`, `"{\"a\": 1}" is not a JSON array: want the method's arguments as one`},
		{`["x",1] ["y"]`, `is not a JSON array: invalid character '[' after top-level value`},
		{`["x",1.5]`, `inventory.SetQuantity(string, int): argument 2: 1.5 is not a whole number: want an integer from -9223372036854775808 to 9223372036854775807`},
		{`["x",9223372036854775808]`, `argument 2: 9223372036854775808 is out of range: want an integer from -9223372036854775808`},
	} {
		for _, cmd := range [][]string{
			{"amplify", "--outer", "2", "--fault", "lose-response", "--rate", "0.3", "--trials", "3", "--args", tc.args},
			{"amplify", "--outer", "2", "--class", "inventory", "--method", "SetQuantity", "--args", tc.args},
			{"verify", "inventory", "--args", "SetQuantity=" + tc.args},
		} {
			code, out, errOut := runCLI(t, cmd...)
			assert.Equal(t, exitUsage, code, "%v: %s", cmd, errOut)
			assert.Empty(t, out, "%v: refused before anything ran", cmd)
			assert.Contains(t, errOut, "--args", cmd)
			assert.Contains(t, errOut, tc.want, cmd)
		}
	}
	// What fits runs: a whole number as a float, every digit kept.
	code, out, errOut := runCLI(t, "amplify", "--outer", "2", "--fault", "lose-response", "--rate", "0.3", "--trials", "3", "--args", `["x", 3.0]`)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Simulated 3 operations")
	code, _, errOut = runCLI(t, "verify", "inventory", "--args", `SetQuantity=["x", 9007199254740993]`)
	require.Equal(t, exitOK, code, errOut)
}

// Rule H2: verify --args giving one method twice kept the last silently.
func TestH2_VerifyRefusesAMethodsArgsTwice(t *testing.T) {
	code, out, errOut := runCLI(t, "verify", "inventory", "--args", `SetQuantity=["a", 1]`, "--args", `SetQuantity=["b", 2]`)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, "dosim: --args SetQuantity: given twice: give each method's arguments once\n", errOut)
}

// Rule C6: a method that failed in both runs (a 3,000-byte key, beyond
// the 2,048-byte limit) is inconclusive, "?", never IDEMPOTENT yes /
// VERDICT ok, and its error is listed.
func TestC6_VerifyAMethodThatFailedBothTimesShowsItsError(t *testing.T) {
	key := strings.Repeat("k", 2_000_001)
	code, out, errOut := runCLI(t, "verify", "inventory", "--args", `SetQuantity=["`+key+`", 3]`)
	assert.Equal(t, exitOK, code, errOut)
	var row string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "inventory  SetQuantity") {
			row = line
		}
	}
	require.NotEmpty(t, row, out)
	assert.Regexp(t, `yes +\? +inconclusive: both runs failed$`, row)
	assert.Contains(t, out, "inventory.SetQuantity  once   object error: storage: Put \"kkkk")
	assert.Contains(t, out, "Keys cannot be larger than 2000000 bytes. A key of size 2000001 was provided.")
}

// Rule H2: no message echoes a flag's or a file's value whole: a 500 KB
// unknown method name made a 500 KB message. dosim's own messages quote
// 64 bytes and say how long the input was (internal/quote); a flag
// parser's message is cut at 4 KB a line.
func TestH2_MessagesEchoBoundedInput(t *testing.T) {
	big := strings.Repeat("M", 500_000)
	dir := t.TempDir()
	scen := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(scen, []byte("namespaces: {INVENTORY: inventory}\nstubs: {shop: {}}\ncalls:\n  - {stub: shop, method: "+big+"}\n"), 0o644))
	sum := filepath.Join(dir, "s.json")
	code, _, errOut := runCLI(t, "explore", ambiguous, "--seeds", "2", "--json", sum)
	require.Equal(t, exitOK, code, errOut)
	rewrite(t, sum, func(m map[string]any) { m["rates"] = map[string]any{big: 0.1} })
	for _, args := range [][]string{
		{"run", scen},
		{"verify", "--scenario", scen},
		{"verify", "inventory", "--args", big + "=[]"},
		{"verify", "inventory", "--args", "SetQuantity=" + big},
		{"amplify", "--outer", "2", "--class", "inventory", "--method", big},
		{"amplify", "--outer", "2", "--fault", big, "--rate", "0.1"},
		{"explore", ambiguous, "--rates", big + "=0.1"},
		{"explore", ambiguous, "--shard", big},
		{"run", "--format", big, scen},
		{"explore", "merge", sum},
		{"explore", ambiguous, "--seeds", big}, // the flag parser's message
	} {
		code, out, errOut := runCLI(t, args...)
		assert.Equal(t, exitUsage, code, "%.80v", args)
		assert.Empty(t, out, "%.80v", args)
		assert.Less(t, len(errOut), 5000, "%.80v: %.300s", args, errOut)
		assert.Contains(t, errOut, " bytes)", "%.80v", args)
	}
}
