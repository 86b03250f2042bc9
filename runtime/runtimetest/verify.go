package runtimetest

import (
	"context"
	"testing"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/verify"
)

// Run runs fn in rt and fails t if it returns an error, a deadlock or a
// panic, naming the seed.
func Run(t testing.TB, rt *runtime.Runtime, fn func(ctx context.Context) error) {
	t.Helper()
	if err := rt.Run(fn); err != nil {
		t.Fatalf("dosim: seed %d: %v", rt.Seed(), err)
	}
}

// VerifyIdempotent checks that running method with args twice for one
// request (a duplicate delivery, as a retry after a lost reply brings it)
// leaves the same world as running it once: the same result, storage and
// side effects, from the storage the object named "verify" of ns holds now
// (usually empty). A method marked object.Retryable that is not idempotent
// fails t with the difference; an unmarked method that is idempotent is
// logged as a candidate for the mark. It returns the report.
func VerifyIdempotent(t testing.TB, ns *runtime.Namespace, method string, args ...any) verify.Report {
	t.Helper()
	snap := ns.Storage(ns.IDFromName("verify")).Snapshot()
	rep, err := verify.Idempotent(ns, method, args, verify.Options{Seed: Seed(t), Snapshot: snap})
	if err != nil {
		t.Fatalf("runtimetest.VerifyIdempotent: %v", err)
		return rep
	}
	switch rep.Verdict {
	case verify.VerdictDanger:
		t.Errorf("%s.%s is marked Retryable but is not idempotent: a retry after a lost reply changes the outcome.\nOnce vs twice:\n%s", rep.Class, rep.Method, rep.Diff)
	case verify.VerdictCouldBeMarked:
		t.Logf("%s.%s is idempotent and not marked: it could be marked object.Retryable", rep.Class, rep.Method)
	case verify.VerdictInconclusive:
		t.Errorf("%s.%s: inconclusive: %s", rep.Class, rep.Method, rep.Diff)
	}
	return rep
}
