package wallet_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dosim/dosim/examples/wallet"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// Withdraw's reply is lost; its retry is refused as a duplicate, so it
// runs once (rule S6).
func TestS6_WithdrawIsNotRunTwice(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Withdraw", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithSeed(7), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("WALLET", wallet.New)
	alice := wallet.FreshStub(ns, "alice") // a new stub per call: a failure breaks a stub (rule L2)

	var withdrawn error
	var balance int
	err := rt.Run(func(ctx context.Context) error {
		if _, err := alice.Deposit(ctx, "tx-1", 50); err != nil {
			return err
		}
		_, withdrawn = alice.Withdraw(ctx, 20) // reply lost: an ambiguous, retryable error
		var err error
		balance, err = alice.Balance(ctx)
		return err
	})
	if err != nil {
		t.Fatalf("seed %d: %v", rt.Seed(), err)
	}
	var e *stub.Error
	if !errors.As(withdrawn, &e) || !e.Retryable {
		t.Errorf("Withdraw: want a retryable error, got %v", withdrawn)
	}
	if balance != 30 { // it ran once: the retry was refused as a duplicate
		t.Errorf("balance = %d, want 30", balance)
	}
}
