package wallet_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// Purse keeps a balance. Deposit is marked Retryable: a retry of the
// same transaction finds its answer under the transaction's id.
type Purse struct{ st *object.State }

func newPurse(st *object.State) object.Object { return &Purse{st: st} }

func (p *Purse) Methods() object.Methods {
	return object.Methods{
		"Deposit": object.Retryable(p.Deposit),
		"Balance": object.Func(p.Balance),
	}
}

// Deposit adds amount once per tx and answers the balance after it.
func (p *Purse) Deposit(ctx context.Context, tx string, amount int) (int, error) {
	s := p.st.Storage()
	if answer, seen, err := object.GetAs[int](ctx, s, "tx/"+tx); err != nil || seen {
		return answer, err // a retry: the first run's answer
	}
	balance, _, err := object.GetAs[int](ctx, s, "balance")
	if err != nil {
		return 0, err
	}
	balance += amount
	if err := s.Put(ctx, "balance", balance); err != nil {
		return 0, err
	}
	return balance, s.Put(ctx, "tx/"+tx, balance)
}

// Balance answers the balance.
func (p *Purse) Balance(ctx context.Context) (int, error) {
	n, _, err := object.GetAs[int](ctx, p.st.Storage(), "balance")
	return n, err
}

// Deposit's reply is lost; the stub retries with the same request
// identity, and the deposit counts once (rule S6).
func TestDepositCountsOnceWhenItsReplyIsLost(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Deposit", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithSeed(7), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("PURSE", newPurse)
	var balance any
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("alice")
		if err != nil {
			return err
		}
		if _, err := s.Call(ctx, "Deposit", "tx-1", 50); err != nil {
			return err
		}
		balance, err = s.Call(ctx, "Balance")
		return err
	})
	if err != nil {
		t.Fatalf("seed %d: %v", rt.Seed(), err)
	}
	if balance != 50 {
		t.Errorf("balance = %v, want 50: the retry counted the deposit again", balance)
	}
}

// 500 seeds of random faults: dosim checks every run and, on a failure,
// prints the seed, its faults shrunk and the go test line that replays it.
func TestPurseUnderFaults(t *testing.T) {
	dosimtest.Func(t, dosimtest.Options{Seeds: 500}, func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("PURSE", newPurse)
		for _, tx := range []string{"tx-1", "tx-2"} {
			s, err := ns.GetByName("alice") // a stub per call: a failure breaks a stub (rule L2)
			if err != nil {
				return err
			}
			_, _ = s.Call(ctx, "Deposit", tx, 10) // an error under faults is expected: the history is checked
		}
		return nil
	})
}
