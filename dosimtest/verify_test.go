package dosimtest_test

import (
	"strings"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/runtime/runtimetest"
	"github.com/dosim/dosim/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Verify (was verify.Test, and before it runtimetest.VerifyIdempotent)
// fails the test on a marked method that is not idempotent and logs an
// unmarked one that is.
func TestVerifyFlagsTheOffer(t *testing.T) {
	rt := runtimetest.New(t)
	ns := rt.Namespace("SHOP", newShop)

	ft := &fakeT{TB: t}
	rep := dosimtest.Verify(ft, ns, "SendOffer", "ada")
	assert.Equal(t, verify.VerdictDanger, rep.Verdict)
	require.Len(t, ft.errors, 1)
	assert.Equal(t, "SHOP.SendOffer is marked Retryable but is not idempotent: a retry after a lost reply changes the outcome.\n"+
		"Once vs twice:\neffects: once 1 [email offer to ada], twice 2 [email offer to ada; email offer to ada]\n", ft.errors[0])

	ft = &fakeT{TB: t}
	rep = dosimtest.Verify(ft, ns, "Price")
	assert.Equal(t, verify.VerdictCouldBeMarked, rep.Verdict)
	assert.False(t, ft.failed)
	assert.Contains(t, strings.Join(ft.logs, "\n"), "SHOP.Price is idempotent and not marked")

	ft = &fakeT{TB: t}
	dosimtest.Verify(ft, ns, "SetPrice", 12)
	assert.False(t, ft.failed, "marked and idempotent")
	assert.Empty(t, ft.logs)
}

// Verify takes its seed as runtimetest.New does, and refuses a malformed
// one, naming where it came from.
func TestVerifySeedFromEnvironment(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("SHOP", newShop)
	t.Setenv("DOSIM_SEED", "forty-two")
	ft := &fakeT{TB: t}
	dosimtest.Verify(ft, ns, "SetPrice", 12)
	require.Len(t, ft.errors, 1)
	assert.Equal(t, `dosimtest.Verify: DOSIM_SEED="forty-two": want an unsigned integer seed`, ft.errors[0])

	t.Setenv("DOSIM_SEED", "7")
	ft = &fakeT{TB: t}
	dosimtest.Verify(ft, ns, "Bump")
	assert.False(t, ft.failed)
}

// Rule C6: Verify fails a test whose check was inconclusive, with the
// reason and the errors.
func TestC6_VerifyFailsAnInconclusiveCheck(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	ft := &fakeT{TB: t}
	rep := dosimtest.Verify(ft, rt.Namespace("SHOP", newShop), "Refuse")
	assert.Equal(t, verify.VerdictInconclusive, rep.Verdict)
	require.Len(t, ft.errors, 1)
	assert.Equal(t, "SHOP.Refuse: inconclusive, both runs failed: nothing was proven about its mark.\n"+
		"the call failed in both runs (once: object error: closed on sundays; twice: object error: closed on sundays): "+
		"a failing call shows nothing of what the method does when it works, so the check proves nothing; call it with arguments and storage under which it succeeds\n", ft.errors[0])
}

// In a test, pass the test's t; the failure reads as below.
func ExampleVerify() {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("SHOP", newShop)

	t := printT{}                               // in a test: the *testing.T
	dosimtest.Verify(t, ns, "SetPrice", 12)     // marked and idempotent: silent
	dosimtest.Verify(t, ns, "Price")            // unmarked and idempotent: logged
	dosimtest.Verify(t, ns, "SendOffer", "ada") // marked, sends twice: fails the test
	// Output:
	// log: SHOP.Price is idempotent and not marked: it could be marked object.Retryable
	// FAIL: SHOP.SendOffer is marked Retryable but is not idempotent: a retry after a lost reply changes the outcome.
	// Once vs twice:
	// effects: once 1 [email offer to ada], twice 2 [email offer to ada; email offer to ada]
}
