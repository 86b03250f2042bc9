package typed_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples/wallet"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/stub/typed"
	"github.com/dosim/dosim/transport"
)

// A typed stub through one stub breaks with it (rule L2); the fresh one
// takes a new stub per call and goes on. Withdraw's reply is lost and its
// retry refused as a duplicate (rule S6): that failure breaks the stub.
func TestL2_TypedStubOneBreaksFreshGoesOn(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Withdraw", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithSeed(7), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("WALLET", wallet.New)
	var oneErr, freshErr, withdrawErr error
	var fresh int
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("alice")
		if err != nil {
			return err
		}
		one := wallet.NewStub(s)
		if _, err := one.Deposit(ctx, "tx-1", 50); err != nil {
			return err
		}
		_, withdrawErr = one.Withdraw(ctx, 20)
		_, oneErr = one.Balance(ctx)
		fresh, freshErr = wallet.FreshStub(ns, "alice").Balance(ctx)
		return nil
	})
	if err != nil {
		t.Fatalf("seed %d: %v", rt.Seed(), err)
	}
	var e *stub.Error
	if !errors.As(withdrawErr, &e) || !e.Retryable {
		t.Fatalf("Withdraw: want the lost reply's retryable error, got %v", withdrawErr)
	}
	var be *stub.Error
	if !errors.As(oneErr, &be) || !be.Broken || !strings.Contains(s(oneErr), "the call of Withdraw failed") || !strings.Contains(s(oneErr), e.Msg) {
		t.Errorf("Balance through the broken stub: got %v, want a Broken error wrapping Withdraw's %v (rule L2)", oneErr, withdrawErr)
	}
	if freshErr != nil || fresh != 30 {
		t.Errorf("Balance through a fresh stub: %d, %v; want 30, nil (Withdraw ran once)", fresh, freshErr)
	}
	calls := rt.Calls()
	if got := calls[len(calls)-1]; got.Method != "Balance" || got.Outcome != transport.OutcomeOK {
		t.Errorf("the last call: %s %s, want Balance ok", got.Method, got.Outcome)
	}
}

func s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A source with no stub to give fails the call with ErrNoStub, saying
// why; a bad option of a fresh stub fails the call with its error.
func TestTypedSourceWithoutStub(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		src  typed.Source
		want string
	}{
		{typed.One(nil), "the stub is nil"},
		{typed.Fresh(nil, "alice"), `the namespace is nil (object "alice")`},
		{nil, "the source is nil (method Balance)"},
	} {
		_, err := typed.Call[int](ctx, tc.src, "Balance")
		if !errors.Is(err, typed.ErrNoStub) || !strings.Contains(s(err), tc.want) {
			t.Errorf("Call: got %v, want ErrNoStub saying %q", err, tc.want)
		}
		err = typed.Do(ctx, tc.src, "Balance")
		if !errors.Is(err, typed.ErrNoStub) || !strings.Contains(s(err), tc.want) {
			t.Errorf("Do: got %v, want ErrNoStub saying %q", err, tc.want)
		}
	}
	rt := runtime.New(runtime.WithSeed(1))
	defer rt.Close()
	ns := rt.Namespace("WALLET", wallet.New)
	_, err := wallet.FreshStub(ns, "alice", stub.MaxRetries(-1)).Balance(ctx)
	if err == nil || !strings.Contains(s(err), `typed: a fresh stub of "alice"`) || !strings.Contains(s(err), "maxRetries") {
		t.Errorf("a bad option: got %v, want the option's error", err)
	}
}
