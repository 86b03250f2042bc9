// Package wallet is a user's own Durable-Object-style class, laid out as a
// project that uses dosim would lay it out: the class in its own package,
// a scenario of an ambiguous failure in testdata, tests that explore its
// fault space from Go, and a ten-line command (cmd/walletsim) that gives
// it dosim's command line.
//
// Deposit takes an idempotency key (the caller's transaction id), so
// running it twice for one request changes nothing the second time: it is
// marked Retryable. Withdraw has no key and stays unmarked, so a retry
// never runs it twice. NewLeaky is the same class with a planted bug:
// Deposit marked Retryable but forgetting its key, so a lost reply and its
// retry credit the money twice.
package wallet

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
)

// Stub, the typed client of Wallet (wallet_stub.go: Stub, NewStub and
// FreshStub, named for a package of one class), is written by
// dosim-gen from Methods; go generate rewrites it, and a test fails when it
// is stale.
//go:generate go run github.com/dosim/dosim/cmd/dosim-gen -type Wallet -name Stub

// Wallet holds one account's balance in its object's storage.
type Wallet struct {
	st *object.State
	// forgetKeys plants the bug: Deposit ignores its transaction id.
	forgetKeys bool
}

// New is the Wallet constructor for runtime.Namespace.
func New(st *object.State) object.Object { return &Wallet{st: st} }

// NewLeaky is a Wallet whose Deposit is marked Retryable but does not
// remember its transaction ids: the planted bug the explorer finds.
func NewLeaky(st *object.State) object.Object { return &Wallet{st: st, forgetKeys: true} }

// Methods lists the wallet's methods and marks the one that is safe to
// run again.
func (w *Wallet) Methods() object.Methods {
	return object.Methods{
		"Deposit":  object.Retryable(w.Deposit), // idempotent by its transaction id
		"Withdraw": object.Func(w.Withdraw),     // no key: never run twice by a retry
		"Balance":  object.Func(w.Balance),
	}
}

// Deposit adds amount to the balance once per transaction id and returns
// the balance after it. A transaction id seen before changes nothing and
// returns what its first run returned: the key remembers the answer, not
// only that the deposit happened.
func (w *Wallet) Deposit(ctx context.Context, txID string, amount int) (int, error) {
	if txID == "" {
		return 0, fmt.Errorf("deposit: a transaction id is required")
	}
	if amount <= 0 {
		return 0, fmt.Errorf("deposit: amount must be > 0, got %d", amount)
	}
	var balance int
	err := w.st.Storage().Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
		if _, err := tx.Get(ctx, "balance", &balance); err != nil {
			return err
		}
		if !w.forgetKeys {
			// Applied before: answer what the first run answered, not the
			// balance now (a deposit made in between would make the replay
			// tell a story no order of the calls can explain).
			seen, err := tx.Get(ctx, "tx/"+txID, &balance)
			if err != nil || seen {
				return err
			}
		}
		balance += amount
		if !w.forgetKeys {
			if err := tx.Put(ctx, "tx/"+txID, balance); err != nil {
				return err
			}
		}
		return tx.Put(ctx, "balance", balance)
	})
	return balance, err
}

// Withdraw takes amount from the balance and returns what is left. It
// fails, changing nothing, when the balance is short.
func (w *Wallet) Withdraw(ctx context.Context, amount int) (int, error) {
	if amount <= 0 {
		return 0, fmt.Errorf("withdraw: amount must be > 0, got %d", amount)
	}
	var balance int
	if _, err := w.st.Storage().Get(ctx, "balance", &balance); err != nil {
		return 0, err
	}
	if balance < amount {
		return balance, fmt.Errorf("withdraw: balance %d is short of %d", balance, amount)
	}
	balance -= amount
	return balance, w.st.Storage().Put(ctx, "balance", balance)
}

// VerifySamples gives `walletsim verify` the arguments to try each method
// with (object.Sampler): without them it asks for --args.
func (w *Wallet) VerifySamples() map[string]object.Sample {
	return map[string]object.Sample{
		"Deposit":  {Args: []any{"tx-1", 50}},
		"Withdraw": {Args: []any{20}, Storage: map[string]any{"balance": 100}},
	}
}

// Balance returns the balance.
func (w *Wallet) Balance(ctx context.Context) (int, error) {
	var balance int
	_, err := w.st.Storage().Get(ctx, "balance", &balance)
	return balance, err
}
