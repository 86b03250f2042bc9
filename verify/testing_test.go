package verify_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/runtime/runtimetest"
	"github.com/dosim/dosim/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeT records what a test would report, so that Test's failures can be
// checked without failing this test.
type fakeT struct {
	testing.TB
	errors, logs []string
	failed       bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.failed = true
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...) }
func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Failed() bool { return f.failed }

// Test was runtimetest.VerifyIdempotent: it fails the test on a marked
// method that is not idempotent and logs an unmarked one that is.
func TestTestFlagsTheOffer(t *testing.T) {
	rt := runtimetest.New(t)
	ns := rt.Namespace("SHOP", func(st *object.State) object.Object { return &shop{st: st} })

	ft := &fakeT{TB: t}
	rep := verify.Test(ft, ns, "SendOffer", "ada")
	assert.Equal(t, verify.VerdictDanger, rep.Verdict)
	require.Len(t, ft.errors, 1)
	assert.Equal(t, "SHOP.SendOffer is marked Retryable but is not idempotent: a retry after a lost reply changes the outcome.\n"+
		"Once vs twice:\neffects: once 1 [email offer to ada], twice 2 [email offer to ada; email offer to ada]\n", ft.errors[0])

	ft = &fakeT{TB: t}
	rep = verify.Test(ft, ns, "Price")
	assert.Equal(t, verify.VerdictCouldBeMarked, rep.Verdict)
	assert.False(t, ft.failed)
	assert.Contains(t, strings.Join(ft.logs, "\n"), "SHOP.Price is idempotent and not marked")

	ft = &fakeT{TB: t}
	verify.Test(ft, ns, "SetPrice", 12)
	assert.False(t, ft.failed, "marked and idempotent")
	assert.Empty(t, ft.logs)
}

// Test takes its seed as runtimetest.New does, and refuses a malformed
// one, naming where it came from.
func TestTestSeedFromEnvironment(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("SHOP", func(st *object.State) object.Object { return &shop{st: st} })
	t.Setenv("DOSIM_SEED", "forty-two")
	ft := &fakeT{TB: t}
	verify.Test(ft, ns, "SetPrice", 12)
	require.Len(t, ft.errors, 1)
	assert.Equal(t, `verify.Test: DOSIM_SEED="forty-two": want an unsigned integer seed`, ft.errors[0])

	t.Setenv("DOSIM_SEED", "7")
	ft = &fakeT{TB: t}
	verify.Test(ft, ns, "Bump")
	assert.False(t, ft.failed)
}

// printT is a testing.TB that prints what a test would report; examples
// have no *testing.T.
type printT struct{ testing.TB }

func (printT) Helper()                           {}
func (printT) Errorf(format string, args ...any) { fmt.Printf("FAIL: "+format, args...) }
func (printT) Fatalf(format string, args ...any) { fmt.Printf("FATAL: "+format, args...) }
func (printT) Logf(format string, args ...any)   { fmt.Printf("log: "+format+"\n", args...) }

// In a test, pass the test's t; the failure reads as below.
func ExampleTest() {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("SHOP", func(st *object.State) object.Object { return &shop{st: st} })

	t := printT{}                          // in a test: the *testing.T
	verify.Test(t, ns, "SetPrice", 12)     // marked and idempotent: silent
	verify.Test(t, ns, "Price")            // unmarked and idempotent: logged
	verify.Test(t, ns, "SendOffer", "ada") // marked, sends twice: fails the test
	// Output:
	// log: SHOP.Price is idempotent and not marked: it could be marked object.Retryable
	// FAIL: SHOP.SendOffer is marked Retryable but is not idempotent: a retry after a lost reply changes the outcome.
	// Once vs twice:
	// effects: once 1 [email offer to ada], twice 2 [email offer to ada; email offer to ada]
}
