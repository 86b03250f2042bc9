package explore_test

import (
	"fmt"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeT records what a test would report, so that Test's failures can be
// checked without failing this test.
type fakeT struct {
	testing.TB
	errors []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...) }

// Test (was runtimetest.Explore) names the first failing seed, its shrunk
// faults, the replay command and the artifacts, and stays quiet on a
// clean scenario.
func TestTestReportsAFailingSeed(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	sc, err := scenario.Load("../testdata/scenarios/mailer-vs-ledger.yaml", builtIns)
	require.NoError(t, err)
	ft := &fakeT{TB: t}
	sum := explore.Test(ft, sc, explore.Options{Seeds: 100})
	require.False(t, sum.Clean())
	require.Len(t, ft.errors, 1)
	msg := ft.errors[0]
	assert.Contains(t, msg, "mailer-vs-ledger: ")
	assert.Contains(t, msg, "linearizability MAIL/newsletter")
	assert.Contains(t, msg, "shrunk to 1 fault(s):\nfaults:\n  rules:\n    - {call: 1, method: Send, attempt: 1")
	assert.Contains(t, msg, "replay: dosim explore ../testdata/scenarios/mailer-vs-ledger.yaml --replay 16")
	assert.Contains(t, msg, "artifacts in ")

	clean, err := scenario.Load("../testdata/scenarios/ambiguous-delivery.yaml", builtIns)
	require.NoError(t, err)
	ft = &fakeT{TB: t}
	assert.True(t, explore.Test(ft, clean, explore.Options{Seeds: 200}).Clean())
	assert.Empty(t, ft.errors)

	ft = &fakeT{TB: t}
	assert.Nil(t, explore.Test(ft, clean, explore.Options{Seeds: -1}))
	require.Len(t, ft.errors, 1, "bad options fail the test")
	assert.Contains(t, ft.errors[0], "explore.Test: ")
}

// printT is a testing.TB that prints what a test would report; examples
// have no *testing.T.
type printT struct{ testing.TB }

func (printT) Helper()                           {}
func (printT) Errorf(format string, args ...any) { fmt.Printf("FAIL: "+format+"\n", args...) }
func (printT) Fatalf(format string, args ...any) { fmt.Printf("FATAL: "+format+"\n", args...) }

// In a test, pass the test's t: a violation fails it with the seed, the
// shrunk faults, a replay command and a folder of artifacts.
func ExampleTest() {
	sc, err := scenario.Load("../testdata/scenarios/ambiguous-delivery.yaml", builtIns)
	if err != nil {
		fmt.Println(err)
		return
	}
	t := printT{} // in a test: the *testing.T
	sum := explore.Test(t, sc, explore.Options{Seeds: 200})
	fmt.Println("seeds:", sum.Ran, "clean:", sum.Clean())
	// Output:
	// seeds: 200 clean: true
}
