package verify_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// shop has one method for each verdict.
type shop struct{ st *object.State }

func (s *shop) Methods() object.Methods {
	return object.Methods{
		"SetPrice":  object.Retryable(s.SetPrice),  // idempotent and marked: ok
		"SendOffer": object.Retryable(s.SendOffer), // marked, but each run sends: DANGER
		"Price":     object.Func(s.Price),          // idempotent, unmarked: could be marked
		"Bump":      object.Func(s.Bump),           // not idempotent, unmarked: ok
		"Refuse":    object.Retryable(s.Refuse),    // always fails the same way: inconclusive (C6)
	}
}

func (s *shop) SetPrice(ctx context.Context, p int) error { return s.st.Storage().Put(ctx, "price", p) }

func (s *shop) SendOffer(ctx context.Context, to string) error {
	return s.st.Effect(ctx, "email", fmt.Sprintf("offer to %s", to))
}

func (s *shop) Price(ctx context.Context) (int, error) {
	var p int
	_, err := s.st.Storage().Get(ctx, "price", &p)
	return p, err
}

func (s *shop) Bump(ctx context.Context) (int, error) {
	p, err := s.Price(ctx)
	if err != nil {
		return 0, err
	}
	return p + 1, s.st.Storage().Put(ctx, "price", p+1)
}

func (s *shop) Refuse(ctx context.Context) error { return fmt.Errorf("closed on sundays") }

// Rules C6 and S6: one method for each verdict; every duplicate delivery
// runs the method again, marked or not.
func TestVerdicts(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("SHOP", func(st *object.State) object.Object { return &shop{st: st} })
	snap := map[string]any{"price": 10}
	tests := []struct {
		method       string
		args         []any
		marked       bool
		idempotent   bool
		verdict      string
		diffMentions string
	}{
		{"SetPrice", []any{12}, true, true, verify.VerdictOK, ""},
		{"SendOffer", []any{"ada"}, true, false, verify.VerdictDanger, "effects: once 1 [email offer to ada], twice 2"},
		{"Price", nil, false, true, verify.VerdictCouldBeMarked, ""},
		{"Bump", nil, false, false, verify.VerdictOK, `storage "price": once 11, twice 12`},
		{"Refuse", nil, true, false, verify.VerdictInconclusive, "the call failed in both runs (once: object error: closed on sundays; twice: object error: closed on sundays)"},
	}
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			rep, err := verify.Idempotent(ns, tc.method, tc.args, verify.Options{Snapshot: snap})
			require.NoError(t, err)
			assert.Equal(t, tc.marked, rep.Marked, "marked")
			assert.Equal(t, tc.idempotent, rep.Idempotent, "idempotent; diff:\n%s", rep.Diff)
			assert.Equal(t, tc.verdict, rep.Verdict)
			assert.Equal(t, 1, rep.Once.Runs)
			assert.Equal(t, 2, rep.Twice.Runs, "the duplicate delivery ran the method again")
			assert.Contains(t, rep.Diff, tc.diffMentions)
		})
	}
	assert.Equal(t, 0, ns.Storage(ns.IDFromName("verify")).Len(), "the namespace's own objects are untouched")
}

func TestVerifyBadInput(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("SHOP", func(st *object.State) object.Object { return &shop{st: st} })
	_, err := verify.Idempotent(ns, "Steal", nil, verify.Options{})
	require.ErrorIs(t, err, verify.ErrVerify)
	assert.Contains(t, err.Error(), `SHOP has no method "Steal" (it has Bump, Price, Refuse, SendOffer, SetPrice)`)
	_, err = verify.Idempotent(ns, "SetPrice", []any{"cheap"}, verify.Options{})
	require.ErrorIs(t, err, verify.ErrVerify)
	assert.Contains(t, err.Error(), `argument 1: cannot use "cheap" (a string): want an integer`)
}

// limiter spends tokens it keeps in a field, as the platform's rate
// limiter does.
type limiter struct {
	st     *object.State
	tokens int
}

func (l *limiter) Methods() object.Methods {
	return object.Methods{
		"Spend":      object.Retryable(l.Spend), // marked, but a retry spends again: DANGER
		"SpendOnce":  object.Func(l.Spend),      // unmarked, and not idempotent: ok, never "could be marked"
		"TokensLeft": object.Func(l.TokensLeft), // idempotent, unmarked: could be marked
	}
}

func (l *limiter) Spend(ctx context.Context) error {
	if l.tokens > 0 {
		l.tokens--
	}
	return nil
}

func (l *limiter) TokensLeft(ctx context.Context) (int, error) { return l.tokens, nil }

// C6 (issue 31): verify compares what the instance keeps in its fields:
// a method that spends an in-memory token twice on a retry is not
// idempotent, though storage, effects and its answer agree.
func TestC6_VerifySeesAnEffectOnMemory(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("LIMITER", func(st *object.State) object.Object { return &limiter{st: st, tokens: 5} })
	for method, verdict := range map[string]string{"Spend": verify.VerdictDanger, "SpendOnce": verify.VerdictOK, "TokensLeft": verify.VerdictCouldBeMarked} {
		rep, err := verify.Idempotent(ns, method, nil, verify.Options{})
		require.NoError(t, err)
		assert.Equal(t, verdict, rep.Verdict, "%s: %s", method, rep.Diff)
		if verdict != verify.VerdictCouldBeMarked {
			assert.Equal(t, "memory: once &{tokens:4}, twice &{tokens:3}\n", rep.Diff, method)
		}
	}
}
