package dosimtest_test

import (
	"fmt"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Scenario (was explore.Test) names the first failing seed, its shrunk
// faults, the replay command and the artifacts, and stays quiet on a
// clean scenario.
func TestScenarioReportsAFailingSeed(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	sc, err := scenario.Load("../testdata/scenarios/mailer-vs-ledger.yaml", builtIns)
	require.NoError(t, err)
	ft := &fakeT{TB: t}
	sum := dosimtest.Scenario(ft, sc, explore.Options{Seeds: 100})
	require.False(t, sum.Clean())
	require.Len(t, ft.errors, 1)
	msg := ft.errors[0]
	assert.Contains(t, msg, "mailer-vs-ledger: ")
	assert.Contains(t, msg, "linearizability MAIL/newsletter")
	assert.Contains(t, msg, "shrunk to 1 fault(s):\nfaults:\n  rules:\n    - {call: 1, method: Send, attempt: 1")
	assert.Contains(t, msg, "replay: dosim explore ../testdata/scenarios/mailer-vs-ledger.yaml --replay 1 --rates ")
	assert.Contains(t, msg, "artifacts in ")

	clean, err := scenario.Load("../testdata/scenarios/ambiguous-delivery.yaml", builtIns)
	require.NoError(t, err)
	ft = &fakeT{TB: t}
	assert.True(t, dosimtest.Scenario(ft, clean, explore.Options{Seeds: 200}).Clean())
	assert.Empty(t, ft.errors)

	ft = &fakeT{TB: t}
	assert.Nil(t, dosimtest.Scenario(ft, clean, explore.Options{Seeds: -1}))
	require.Len(t, ft.errors, 1, "bad options fail the test")
	assert.Contains(t, ft.errors[0], "dosimtest.Scenario: ")
}

// In a test, pass the test's t: a violation fails it with the seed, the
// shrunk faults, a replay command and a folder of artifacts.
func ExampleScenario() {
	sc, err := scenario.Load("../testdata/scenarios/ambiguous-delivery.yaml", builtIns)
	if err != nil {
		fmt.Println(err)
		return
	}
	t := printT{} // in a test: the *testing.T
	sum := dosimtest.Scenario(t, sc, explore.Options{Seeds: 200})
	fmt.Println("seeds:", sum.Ran, "clean:", sum.Clean())
	// Output:
	// seeds: 200 clean: true
}

// U4 for a scenario's exhaustive search: the replay command carries the
// shrunk faults (--replay-faults), since the failure is a placement of
// faults, not what the seed draws.
func TestU4_ScenarioExhaustiveFailureReplaysByItsFaults(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	sc, err := scenario.Load("../testdata/scenarios/booth-leaky.yaml", builtIns)
	require.NoError(t, err)
	ft := &fakeT{TB: t}
	sum := dosimtest.Scenario(ft, sc, explore.Options{Exhaustive: true, MaxFaults: 1})
	require.NotNil(t, sum)
	require.Len(t, ft.errors, 1)
	f := sum.FirstFailing
	require.NotNil(t, f)
	assert.Contains(t, ft.errors[0], "replay: dosim explore ../testdata/scenarios/booth-leaky.yaml --replay 1 --replay-faults "+explore.FaultSetText(f.Shrunk)+" --latency ")
}
