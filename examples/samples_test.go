package examples_test

import (
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule C6: every method of every built-in class has a sample, and the
// verifier's verdicts on them are what the classes teach: the mailer's
// Send is dangerous, the ledger's Transfer is safe, seats' Cancel too.
func TestSamplesAndVerdicts(t *testing.T) {
	want := map[string]string{
		"mailer.Send":           verify.VerdictDanger,
		"ledger.Transfer":       verify.VerdictOK,
		"inventory.SetQuantity": verify.VerdictOK,
		"inventory.AddOne":      verify.VerdictOK, // not idempotent, and rightly unmarked
		"inventory.Get":         verify.VerdictCouldBeMarked,
		"counter.Increment":     verify.VerdictOK,
		"counter.Reset":         verify.VerdictOK,
		"ledger.Deposit":        verify.VerdictOK,
		"seats.Book":            verify.VerdictOK,     // idempotent by booking id (rule Q2)
		"seats-leaky.Book":      verify.VerdictDanger, // the retry fails on UNIQUE
		"seats.Cancel":          verify.VerdictOK,     // its tombstone remembers the answer (C6)
		"seats-leaky.Cancel":    verify.VerdictOK,     // Seats' Cancel, inherited
	}
	for _, c := range examples.Classes() {
		rt := runtime.New()
		ns := rt.Namespace(c.Name, c.New)
		ms, err := ns.Methods(ns.IDFromName("x"))
		require.NoError(t, err)
		for name := range ms {
			sample, ok := c.Samples[name]
			require.True(t, ok, "%s.%s has no sample", c.Name, name)
			rep, err := verify.Idempotent(ns, name, sample.Args, verify.Options{Snapshot: sample.Storage})
			require.NoError(t, err, "%s.%s", c.Name, name)
			if v, ok := want[c.Name+"."+name]; ok {
				assert.Equal(t, v, rep.Verdict, "%s.%s:\n%s", c.Name, name, rep.Diff)
			}
		}
		require.NoError(t, rt.Close())
	}
}

// Every built-in class gives its samples the way a class of yours does,
// as an object.Sampler, and they are the Class's Samples.
func TestBuiltInsAreSamplers(t *testing.T) {
	for _, c := range examples.Classes() {
		s, ok := c.New(new(object.State)).(object.Sampler)
		require.True(t, ok, "%s is not an object.Sampler", c.Name)
		assert.Equal(t, c.Samples, s.VerifySamples(), c.Name)
	}
}
