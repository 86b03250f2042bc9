package dosimtest

import (
	"testing"

	"github.com/dosim/dosim/internal/testrun"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/verify"
)

// Verify runs verify.Idempotent from go test: it checks that running
// method with args twice for one request (a duplicate delivery, as a retry
// after a lost reply brings it) leaves the same world as running it once:
// the same result, storage and side effects, from the storage the object
// named "verify" of ns holds now (usually empty). A method marked
// object.Retryable that is not idempotent fails t with the difference; an
// unmarked method that is idempotent is logged as a candidate for the
// mark. An inconclusive check (the call failed in both runs, the object
// was reset, the duplicate did not run) fails t too, with the reason and
// the errors the calls got: a test that asked for a proof and checked
// nothing must not pass (rules C6 and H2). Give the method arguments and
// storage under which it succeeds. Both runs use the seed of -dosim.seed,
// else DOSIM_SEED, else 1. It returns the report.
func Verify(t testing.TB, ns *runtime.Namespace, method string, args ...any) verify.Report {
	t.Helper()
	seed, err := testrun.Seed()
	if err != nil {
		t.Fatalf("dosimtest.Verify: %v", err)
		return verify.Report{}
	}
	snap := ns.Storage(ns.IDFromName("verify")).Snapshot()
	rep, err := verify.Idempotent(ns, method, args, verify.Options{Seed: seed, Snapshot: snap})
	if err != nil {
		t.Fatalf("dosimtest.Verify: %v", err)
		return rep
	}
	switch rep.Verdict {
	case verify.VerdictDanger:
		t.Errorf("%s.%s is marked Retryable but is not idempotent: a retry after a lost reply changes the outcome.\nOnce vs twice:\n%s", rep.Class, rep.Method, rep.Diff)
	case verify.VerdictCouldBeMarked:
		t.Logf("%s.%s is idempotent and not marked: it could be marked object.Retryable", rep.Class, rep.Method)
	case verify.VerdictInconclusive:
		t.Errorf("%s.%s: inconclusive, %s: nothing was proven about its mark.\n%s", rep.Class, rep.Method, rep.Reason, rep.Diff)
	}
	return rep
}
