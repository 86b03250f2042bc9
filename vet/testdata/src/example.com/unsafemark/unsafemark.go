package unsafemark

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
)

type Shop struct{ st *object.State }

func (s *Shop) Methods() object.Methods {
	return object.Methods{
		"Send":        object.Retryable(s.Send),
		"AddOne":      object.Retryable(s.AddOne),
		"Deposit":     object.Retryable(s.Deposit),
		"Bump":        object.Retryable(s.Bump),
		"Transfer":    object.Retryable(s.Transfer),
		"Credit":      object.Retryable(s.Credit),
		"SetQuantity": object.Retryable(s.SetQuantity),
		"Get":         object.Retryable(s.Get),
		"Pay":         object.Retryable(s.Pay),
		"Charge":      object.Retryable(s.Charge),
		"Count":       object.Func(s.Count),
	}
}

func (s *Shop) Send(ctx context.Context, to string) error {
	return s.st.Effect(ctx, "email", to) // want `Retryable Shop.Send records an effect \(st.Effect\) before it looks up any key made from its arguments.*This is a heuristic`
}

func (s *Shop) AddOne(ctx context.Context, item string) (int, error) {
	n, _, err := object.GetAs[int](ctx, s.st.Storage(), item)
	if err != nil {
		return 0, err
	}
	n++
	return n, s.st.Storage().Put(ctx, item, n) // want `Retryable Shop.AddOne reads item and writes it back from what it read.*This is a heuristic`
}

func balanceKey(a string) string { return "balance/" + a }

func (s *Shop) Deposit(ctx context.Context, account string, amount int) (int, error) {
	var n int
	if _, err := s.st.Storage().Get(ctx, balanceKey(account), &n); err != nil {
		return 0, err
	}
	n += amount
	return n, s.st.Storage().Put(ctx, balanceKey(account), n) // want `Retryable Shop.Deposit reads balanceKey\(account\)`
}

// Bump's read-modify-write is in a helper: reported at the call.
func (s *Shop) Bump(ctx context.Context) error {
	return s.bump(ctx, "hits") // want `Retryable Shop.Bump reads key and writes it back`
}

func (s *Shop) bump(ctx context.Context, key string) error {
	var n int
	if _, err := s.st.Storage().Get(ctx, key, &n); err != nil {
		return err
	}
	return s.st.Storage().Put(ctx, key, n+1)
}

// Transfer looks up its idempotency key first: safe.
func (s *Shop) Transfer(ctx context.Context, key, from, to string, amount int) error {
	return s.st.Storage().Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
		done, err := tx.Get(ctx, "transfer/"+key, new(bool))
		if err != nil || done {
			return err
		}
		var a, b int
		if _, err := tx.Get(ctx, balanceKey(from), &a); err != nil {
			return err
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
		return tx.Put(ctx, "transfer/"+key, true)
	})
}

// Credit reads the balance first, then looks its key up, then writes:
// the lookup comes before the write, which is what counts.
func (s *Shop) Credit(ctx context.Context, txID string, amount int) (int, error) {
	var balance int
	err := s.st.Storage().Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
		if _, err := tx.Get(ctx, "balance", &balance); err != nil {
			return err
		}
		seen, err := tx.Get(ctx, "tx/"+txID, &balance)
		if err != nil || seen {
			return err
		}
		balance += amount
		if err := tx.Put(ctx, "tx/"+txID, balance); err != nil {
			return err
		}
		return tx.Put(ctx, "balance", balance)
	})
	return balance, err
}

func (s *Shop) SetQuantity(ctx context.Context, item string, n int) error {
	return s.st.Storage().Put(ctx, item, n)
}

func (s *Shop) Get(ctx context.Context, item string) (int, error) {
	var n int
	_, err := s.st.Storage().Get(ctx, item, &n)
	return n, err
}

// Pay looks its key up in SQL before it charges: safe.
func (s *Shop) Pay(ctx context.Context, key string) error {
	c, err := s.st.SQL().Exec(ctx, "UPDATE holds SET paid = 1 WHERE key = ? AND paid = 0", key)
	if err != nil || c.RowsWritten == 0 {
		return err
	}
	return s.st.Effect(ctx, "charge", key)
}

func (s *Shop) Charge(ctx context.Context, card string) error {
	if card == "" {
		return fmt.Errorf("no card")
	}
	//dosimvet:ok the payment provider deduplicates charges by the request id
	return s.st.Effect(ctx, "charge", card)
}

// Count is not marked: a read-modify-write is what it is for.
func (s *Shop) Count(ctx context.Context) (int, error) {
	var n int
	if _, err := s.st.Storage().Get(ctx, "count", &n); err != nil {
		return 0, err
	}
	n++
	return n, s.st.Storage().Put(ctx, "count", n)
}
