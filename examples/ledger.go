package examples

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
)

// Ledger keeps account balances. Transfer shows the fix for Mailer's
// mistake: it takes an idempotency key chosen by the caller (the same on
// every attempt, since the arguments are), remembers the keys it has
// applied in storage, in the same transaction as the balances, and does
// nothing the second time it sees a key. Only then is it marked Retryable:
// running it twice for one request is the same as running it once.
//
// Deposit has no key: it is not idempotent and stays unmarked.
type Ledger struct {
	st *object.State
}

// NewLedger is the Ledger constructor for runtime.Namespace.
func NewLedger(st *object.State) object.Object { return &Ledger{st: st} }

// Methods lists Ledger's methods.
func (l *Ledger) Methods() object.Methods {
	return object.Methods{
		"Deposit":  object.Func(l.Deposit),
		"Transfer": object.Retryable(l.Transfer), // safe: idempotent by its key
		"Balance":  object.Retryable(l.Balance),
	}
}

func balanceKey(account string) string { return "balance/" + account }

// Deposit adds amount to account and returns the new balance.
func (l *Ledger) Deposit(ctx context.Context, account string, amount int) (int, error) {
	if amount <= 0 {
		return 0, fmt.Errorf("deposit: amount must be > 0, got %d", amount)
	}
	var n int
	if _, err := l.st.Storage().Get(ctx, balanceKey(account), &n); err != nil {
		return 0, err
	}
	n += amount
	return n, l.st.Storage().Put(ctx, balanceKey(account), n)
}

// Transfer moves amount from one account to another, once per key: a
// second Transfer with a key already applied changes nothing and succeeds.
func (l *Ledger) Transfer(ctx context.Context, key, from, to string, amount int) error {
	if key == "" {
		return fmt.Errorf("transfer: an idempotency key is required")
	}
	if amount <= 0 {
		return fmt.Errorf("transfer: amount must be > 0, got %d", amount)
	}
	return l.st.Storage().Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
		done, err := tx.Get(ctx, "transfer/"+key, new(bool))
		if err != nil || done {
			return err // already applied (or unreadable): nothing to do
		}
		var a, b int
		if _, err := tx.Get(ctx, balanceKey(from), &a); err != nil {
			return err
		}
		if a < amount {
			return fmt.Errorf("transfer %s: %s has %d, cannot send %d", key, from, a, amount)
		}
		if _, err := tx.Get(ctx, balanceKey(to), &b); err != nil {
			return err
		}
		if err := tx.Put(ctx, balanceKey(from), a-amount); err != nil {
			return err
		}
		if err := tx.Put(ctx, balanceKey(to), b+amount); err != nil {
			return err
		}
		return tx.Put(ctx, "transfer/"+key, true) // remembered with the balances
	})
}

// Balance returns the balance of account (0 if it never had money).
func (l *Ledger) Balance(ctx context.Context, account string) (int, error) {
	var n int
	_, err := l.st.Storage().Get(ctx, balanceKey(account), &n)
	return n, err
}
