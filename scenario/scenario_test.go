package scenario_test

import (
	"github.com/dosim/dosim/examples"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// builtIns registers dosim's built-in classes, as cmd/dosim does.
var builtIns = scenario.WithBuiltInClasses(examples.Constructors())

// scenarioFiles lists the scenarios shipped in testdata/scenarios.
func scenarioFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("../testdata/scenarios/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 8)
	return files
}

func load(t testing.TB, path string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(path, builtIns)
	require.NoError(t, err)
	return sc
}

// Every shipped scenario loads, runs and meets its expectations.
func TestShippedScenariosPass(t *testing.T) {
	for _, f := range scenarioFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc := load(t, f)
			res, err := sc.Run(scenario.Logger(zaptest.NewLogger(t)))
			require.NoError(t, err)
			for _, fl := range res.Failures {
				t.Errorf("seed %d: %s", res.Seed, fl)
			}
			assert.Positive(t, res.Checked, "a shipped scenario checks something")
		})
	}
}

// Rule D1: the same scenario and seed give the same trace and the same
// timeline, byte for byte; Run may be called again on the same Scenario.
func TestSameSeedSameTraceD1(t *testing.T) {
	for _, f := range scenarioFiles(t) {
		sc := load(t, f)
		a, err := sc.Run()
		require.NoError(t, err)
		b, err := sc.Run()
		require.NoError(t, err)
		require.Equal(t, a.Trace(), b.Trace(), f)
		var ta, tb strings.Builder
		require.NoError(t, render.Text(&ta, a.Report(), render.TextOptions{}))
		require.NoError(t, render.Text(&tb, b.Report(), render.TextOptions{}))
		require.Equal(t, ta.String(), tb.String(), f)
	}
	// Another seed draws other backoffs and request identities.
	sc := load(t, "../testdata/scenarios/amplification.yaml")
	a, err := sc.Run(scenario.Seed(1))
	require.NoError(t, err)
	b, err := sc.Run(scenario.Seed(2))
	require.NoError(t, err)
	assert.NotEqual(t, a.Trace(), b.Trace())
	assert.Equal(t, uint64(2), b.Seed)
}

// An unmet expectation says where it was written, what it expected and
// what happened.
func TestFailureSaysExpectedBesideGot(t *testing.T) {
	sc, err := scenario.Parse("wrong.yaml", []byte(`namespaces: {INVENTORY: inventory}
stubs: {shop: {}}
faults:
  rules: [{method: AddOne, attempt: 1, fault: lose-response}]
calls:
  - stub: shop
    method: AddOne
    args: [apple]
    expect:
      outcome: recovered
      executions: 2
      error: none
      result: 1
  - {stub: shop, method: Get, args: [apple], expect: {result: 2}}
expect:
  storage: [{stub: shop, key: apple, value: 2}, {stub: shop, key: pear, value: 0}]
  effects: {email: 1}
`), builtIns)
	require.NoError(t, err)
	res, err := sc.Run()
	require.NoError(t, err)
	assert.False(t, res.Passed())
	assert.Equal(t, 8, res.Checked)
	var got []string
	for _, f := range res.Failures {
		got = append(got, f.String())
	}
	first := "an error: INVENTORY/shop AddOne, attempt 1: reply lost (lose-response): the caller cannot tell whether the method ran (it did) [retryable]"
	assert.Equal(t, []string{
		"wrong.yaml:10: calls[0].expect.outcome (INVENTORY/shop.AddOne): expected recovered, got duplicate-rejected",
		"wrong.yaml:11: calls[0].expect.executions (INVENTORY/shop.AddOne): expected 2 executions, got 1 execution",
		"wrong.yaml:13: calls[0].expect.result (INVENTORY/shop.AddOne): expected 1, got " + first,
		"wrong.yaml:12: calls[0].expect.error (INVENTORY/shop.AddOne): expected no error, got " + first,
		"wrong.yaml:14: calls[1].expect.result (INVENTORY/shop.Get): expected 2, got 1",
		`wrong.yaml:16: expect.storage[0]: expected INVENTORY/shop "apple" = 2, got INVENTORY/shop "apple" = 1`,
		`wrong.yaml:16: expect.storage[1]: expected INVENTORY/shop "pear" = 0, got INVENTORY/shop "pear" absent`,
		"wrong.yaml:17: expect.effects.email: expected 1 email effect, got 0 email effects",
	}, got)
}

// A run can replace the scenario's faults or add to them, as a fault
// explorer does.
func TestRunWithOtherFaults(t *testing.T) {
	sc := load(t, "../testdata/scenarios/ambiguous-delivery.yaml")

	clean, err := sc.Run(scenario.ReplaceFaults(scenario.Faults{}))
	require.NoError(t, err)
	assert.Nil(t, clean.Faults.Plan())
	for _, c := range clean.Calls {
		assert.Equal(t, transport.OutcomeOK, c.Outcome, "without faults every call succeeds at once")
	}
	assert.False(t, clean.Passed(), "the scenario's expectations assume its faults")

	// Extra rules win over the scenario's: AddOne's first reply is lost, and
	// its retry is not delivered, so the stub retries again.
	extra := scenario.Faults{Rules: []transport.Rule{{Method: "AddOne", Attempt: 2, Fault: transport.NotDelivered}}}
	res, err := sc.Run(scenario.AddFaults(extra))
	require.NoError(t, err)
	add := res.Calls[0]
	require.Len(t, add.Attempts, 3)
	assert.Equal(t, transport.LoseResponse, add.Attempts[0].Fault)
	assert.Equal(t, transport.NotDelivered, add.Attempts[1].Fault)
	assert.True(t, add.Attempts[2].Rejected)
	assert.Len(t, res.Faults.Rules, 3)

	// Random faults, seeded: the same seed draws the same faults.
	rates := scenario.Faults{Rates: transport.Rates{transport.LoseRequest: 0.3, transport.LoseResponse: 0.3}}
	var traces []string
	for range 2 {
		res, err := sc.Run(scenario.AddFaults(rates), scenario.Seed(99))
		require.NoError(t, err)
		traces = append(traces, res.Trace())
	}
	assert.Equal(t, traces[0], traces[1])

	// A plan that is not valid is refused before anything runs.
	_, err = sc.Run(scenario.AddFaults(scenario.Faults{Rates: transport.Rates{transport.LoseRequest: 2}}))
	require.ErrorIs(t, err, transport.ErrInvalid)
	assert.NotErrorIs(t, err, scenario.ErrRun)
}

// Calls at a set time start then, at the earliest; a concurrent block's
// calls run together; results, records and labels are kept per call.
func TestTimingConcurrencyAndOuterLoops(t *testing.T) {
	sc, err := scenario.Parse("t.yaml", []byte(`namespaces: {C: counter}
stubs: {n: {}}
faults:
  rules: [{method: Reset, delay: 2s}]
calls:
  - {stub: n, method: Increment, at: 500ms}
  - concurrent:
      - {stub: n, method: Reset}
      - {stub: n, method: Increment, at: 1s}
  - {stub: n, method: Increment, at: 1s}
  - {stub: n, method: Get, outer: 3}
  - sleep: 10s
  - {stub: n, method: Get}
`), builtIns)
	require.NoError(t, err)
	res, err := sc.Run()
	require.NoError(t, err)
	ms := func(i int) int64 { return res.Calls[i].Start.Milliseconds() }
	require.Len(t, res.Calls, 6)
	assert.Equal(t, int64(500), ms(0), "at: 500ms")
	// The concurrent block starts at 500ms: Reset at once (2s on the link),
	// the Increment at 1s, which the Reset then overwrites at 2.5s.
	assert.Equal(t, []int{1}, res.Outcomes[1].Records)
	assert.Equal(t, int64(500), ms(1))
	assert.Equal(t, int64(1000), ms(2))
	assert.Equal(t, int64(2500), ms(3), "at: 1s has passed: it starts when the block ends")
	assert.Equal(t, []int{4}, res.Outcomes[4].Records, "an outer loop stops at the first success")
	assert.Equal(t, 1, res.Outcomes[4].Value)
	assert.Equal(t, int64(12500), ms(5), "sleep: 10s")
	assert.Equal(t, []string{"Increment()", "Reset()", "Increment()", "Increment()", "Get() [outer 1/3]", "Get()"}, res.Labels())
	assert.Equal(t, "calls[1].concurrent[1]", sc.Calls()[2].Path)
}

// D1: a ReplaceFaults option made once (its fault plan built once) and
// run for many seeds gives each seed the trace a fresh option gives; and
// SkipExpectations changes nothing of the run but the expectations it
// leaves unchecked (explore.expect still answers).
func TestD1_ReusedReplaceFaultsAndSkipExpectations(t *testing.T) {
	sc, err := scenario.Load(filepath.Join("..", "testdata", "scenarios", "ambiguous-delivery.yaml"), builtIns)
	require.NoError(t, err)
	faults := scenario.Faults{Rates: transport.Rates{transport.LoseResponse: 0.3, transport.LoseRequest: 0.2}}
	once := scenario.ReplaceFaults(faults)
	failed := 0
	for seed := uint64(1); seed <= 30; seed++ {
		fresh, err := sc.Run(scenario.Seed(seed), scenario.ReplaceFaults(faults))
		require.NoError(t, err)
		reused, err := sc.Run(once, scenario.Seed(seed), scenario.SkipExpectations())
		require.NoError(t, err)
		assert.Equal(t, fresh.Trace(), reused.Trace(), "seed %d", seed)
		assert.Equal(t, fresh.Storage, reused.Storage, "seed %d", seed)
		assert.Equal(t, fresh.CheckExplore(), reused.CheckExplore(), "seed %d", seed)
		assert.Positive(t, fresh.Checked)
		assert.Zero(t, reused.Checked, "seed %d: expectations skipped", seed)
		assert.Empty(t, reused.Failures, "seed %d", seed)
		failed += len(fresh.Failures)
	}
	assert.Positive(t, failed, "the file's expectations fail under these faults: skipping them was tested")
}
