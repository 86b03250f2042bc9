package cli

import (
	"bytes"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	outbox      = "../testdata/scenarios/outbox-queue.yaml"
	setQuantity = "../testdata/scenarios/setquantity-overwrites-addone.yaml"
	allRates    = "fail-after-delivery=0.04,lose-request=0.04,lose-response=0.04,lose-while-running=0.04,not-delivered=0.04,overloaded=0.04"
	// defaultRates are explore.DefaultRates as --rates spells them: every
	// fault kind, resets and failing writes rarer, connection drops too.
	defaultRates = "drop-connection=0.04," + allRates + ",reset=0.01,storage-write-fails=0.01"
)

// Without faults the outbox's queue, retries and dead letters used to be
// reported as linearizability violations on every seed, "shrunk to 0";
// then they went unchecked while the sweep said clean. Now its background
// work is part of its history, and every history is checked (C2, C3).
func TestC3_ExploreOutboxChecksEveryHistory(t *testing.T) {
	code, out, errOut := runCLI(t, "explore", outbox, "--rates", "lose-response=0", "--seeds", "100")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "100 seeds run; 100 of 100 object histories checked for linearizability (100%)\n")
	assert.Contains(t, out, "faults fired: none\nrule paths: none (every call succeeded at its first attempt)\n")
	assert.Contains(t, out, "clean: no violation")
	assert.NotContains(t, out, "shrunk")
}

// The lost update of a retried SetQuantity over a concurrent AddOne is
// found in the scenario's own seeds, shrunk to the one lost reply, and
// printed with the command that replays it; shrinking shows progress on
// stderr.
func TestH2_ExploreFindsSetQuantityOverwritingAddOne(t *testing.T) {
	code, out, errOut := runCLI(t, "explore", setQuantity)
	require.Equal(t, exitExpect, code, errOut)
	// Rule C10: the violation names the operation and what the class
	// answers there.
	assert.Contains(t, out, `seed 1: linearizability INVENTORY/shop: the first operation no order explains is Get("stock") (call 3, at `)
	assert.Contains(t, out, "after 2 of its 3 operations, in the order that explains the most, the class answers 11; its caller saw 10 (no order of its 3 calls")
	assert.Contains(t, out, "first failing seed 1: 4 fault(s) drawn, shrunk to 1:\nit ran swarm, its profile: lose-response=0.46910040417212157, latency p50=8ms,p99=400ms\n  faults:\n    rules:\n"+
		"      - {call: 1, method: SetQuantity, attempt: 1, fault: lose-response}\n")
	assert.Contains(t, out, "replay: dosim explore "+setQuantity+" --replay 1 --rates lose-response=0.1 --latency p50=2ms,p99=100ms --swarm --strategy random\n")
	assert.Contains(t, errOut, "shrinking: 4 replays, smallest failing fault set 1\n")

	code, out, _ = runCLI(t, "explore", setQuantity, "--replay", "1", "--rates", "lose-response=0.1", "--swarm", "--strategy", "random")
	assert.Equal(t, exitExpect, code)
	assert.Contains(t, out, "seed 1 (its own run: the 4 faults it drew) violates:")

	code, out, _ = runCLI(t, "explore", setQuantity, "--replay", "16", "--rates", "lose-response=0.1", "--strategy", "random")
	assert.Equal(t, exitExpect, code, "the random strategy finds it at seed 16, as before mix")
	assert.Contains(t, out, "seed 16 (its own run: the 1 fault it drew) violates:")
}

// C5: the first failing seed's report is its shrunk replay, said so, with
// that replay's own violations; a replay that did not reproduce would say
// so too (TestH2_ExploreSummarySaysHowShrinkingEnded).
func TestC5_ExploreReportsTheShrunkReplay(t *testing.T) {
	code, out, errOut := runCLI(t, "explore", setQuantity, "--seeds", "400", "--rates", allRates)
	require.Equal(t, exitExpect, code, errOut)
	assert.Contains(t, out, "violation(s) in ")
	assert.Contains(t, out, " seed(s), each in the seed's own run:\n")
	assert.Regexp(t, `first failing seed \d+: \d+ fault\(s\) drawn, shrunk to 1:`, out)
	assert.Regexp(t, `the shrunk replay \(seed \d+ with 1 fault only\) violates:\n  seed \d+: linearizability INVENTORY/shop`, out)
}

// The other ways shrinking can end each say what happened.
func TestH2_ExploreSummarySaysHowShrinkingEnded(t *testing.T) {
	rule := transport.Rule{Call: 3, Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse}
	three := []transport.Rule{rule, rule, rule}
	tests := []struct {
		f    explore.Failing
		want string
	}{
		{explore.Failing{Faults: three, Shrunk: three[:2], Shrink: explore.ShrinkBudget, Replays: 7},
			"3 fault(s) drawn, shrinking stopped when --shrink-time ran out, after 7 replays; the smallest failing set found so far has 2:"},
		{explore.Failing{Faults: three, Shrunk: three, Shrink: explore.ShrinkOff}, "3 fault(s) drawn (not shrunk: --no-shrink):"},
		{explore.Failing{Faults: three, Shrunk: nil, Shrink: explore.ShrinkDone}, "3 fault(s) drawn, shrunk to 0: it fails with no fault at all:"},
		{explore.Failing{Faults: three, Shrunk: three[:1], Shrink: explore.ShrinkDone}, "3 fault(s) drawn, shrunk to 1:"},
		{explore.Failing{Faults: three, Shrunk: three, Shrink: explore.ShrinkNotReproduced},
			"3 fault(s) drawn, not shrunk: replayed as explicit rules they did not reproduce the failure (the run took another course without the random draws); the seed itself replays it:"},
	}
	for _, tc := range tests {
		f := tc.f
		f.Seed = 9
		sum := &explore.Summary{Scenario: "s", File: "s.yaml", First: 1, Seeds: 10, Ran: 10, Failed: 1, Total: 1,
			Violations: []explore.Violation{{Seed: 9, Kind: explore.KindLinearizability, Message: "m"}}, FirstFailing: &f}
		var b bytes.Buffer
		(&app{name: "dosim"}).writeSummary(&b, sum, false)
		assert.Contains(t, b.String(), "first failing seed 9: "+tc.want+"\n")
	}
}

func TestH2_ExploreShrinkTimeFlag(t *testing.T) {
	for _, v := range []string{"0", "-1s"} {
		code, _, errOut := runCLI(t, "explore", ambiguous, "--shrink-time", v)
		assert.Equal(t, exitUsage, code, v)
		assert.Contains(t, errOut, "want a duration of 1ms or more, such as 60s (--no-shrink turns shrinking off)", v)
	}
	code, _, errOut := runCLI(t, "explore", ambiguous, "--shrink-time", "soon")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "shrink-time")
	code, _, errOut = runCLI(t, "explore", setQuantity, "--seeds", "20", "--shrink-time", "2m")
	assert.Equal(t, exitExpect, code, errOut)
}
