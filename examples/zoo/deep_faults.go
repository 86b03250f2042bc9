package zoo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// The deep bugs of faults: random fault draws alone (fixed rates, the
// random tie-break, no latency) miss each within 10,000 seeds. Swarm
// finds the fallback charge, bounded exhaustive search the resent batch,
// a coverage-guided fuzzer the fallback ladder.

// Till is a correct class: Charge is marked Retryable and remembers each
// charge's key, so a retry of a charge (the stub's, or a caller's under
// the same key) charges once.
type Till struct{ st *object.State }

// NewTill builds a till.
func NewTill(st *object.State) object.Object { return &Till{st: st} }

// Methods lists Charge and Total, both marked Retryable.
func (t *Till) Methods() object.Methods {
	return object.Methods{"Charge": object.Retryable(t.Charge), "Total": object.Retryable(t.Total)}
}

// Charge adds amount under key, once per key, and returns the total.
func (t *Till) Charge(ctx context.Context, key string, amount int) (int, error) {
	s := t.st.Storage()
	var total int
	if _, err := s.Get(ctx, "total", &total); err != nil {
		return 0, err
	}
	if ok, err := s.Get(ctx, "charge:"+key, new(bool)); err != nil || ok {
		return total, err
	}
	total += amount
	if err := s.PutMany(ctx, map[string]any{"charge:" + key: true, "total": total}); err != nil {
		return 0, err
	}
	return total, nil
}

// Total returns the total charged.
func (t *Till) Total(ctx context.Context) (int, error) {
	var total int
	_, err := t.st.Storage().Get(ctx, "total", &total)
	return total, err
}

// checkCharged fails when the till "shop" holds more than want.
func checkCharged(ctx context.Context, ns *runtime.Namespace, want int) error {
	total, err := readInt(ctx, ns, "shop", "Total")
	if err == nil && total > want {
		return fmt.Errorf("order-1 was charged %d, more than its %d", total, want)
	}
	return nil
}

// chargeWithFallback: when the stub gives up on a charge with a retryable
// error (every one of its seven attempts failed so), the caller charges
// again. Buggy, under a new key, though a failed attempt may have charged
// already; fixed, under the same key. Only a run in which all seven
// attempts of the call fail shows it: at the default rates (a retryable
// fault on 16% of attempts) that is about 0.16^7, three seeds in a
// million; a swarm profile that turns one kind up draws it often.
func chargeWithFallback(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("TILL", NewTill)
		s, err := ns.GetByName("shop", stub.MaxRetries(6), stub.TimeoutMs(60000))
		if err != nil {
			return err
		}
		var se *stub.Error
		if _, err := stub.CallAs[int](ctx, s, "Charge", "order-1", 10); errors.As(err, &se) && se.Retryable {
			again, err := ns.GetByName("shop")
			if err != nil {
				return err
			}
			key := "order-1-again"
			if fixed {
				key = "order-1"
			}
			_, _ = stub.CallAs[int](ctx, again, "Charge", key, 10)
		}
		return checkCharged(ctx, ns, 10)
	}
}

var fallbackCharge = Bug{
	Name: "fallback-charge", Kind: "a fallback that charges again under a new key when a call gives up",
	Needs:     "all seven attempts of one call failing retryably (one kind drawn often)",
	Elsewhere: "explore/swarm_test.go",
	Buggy:     chargeWithFallback(false), Fixed: chargeWithFallback(true),
	FoundBy: FoundBySwarm,
}

// QuietRates are the rates of a quiet network: 1% of attempts not
// delivered, 1% losing their response. The resent batch needs three
// particular attempts to fail, one in about 140,000 seeds at these rates;
// an exhaustive search places the rates' kinds without regard to the
// rates.
var QuietRates = transport.Rates{transport.NotDelivered: 0.01, transport.LoseResponse: 0.01}

// resendBatch pays three instalments of 5 into a purse (Account, unkeyed:
// a deposit is not safe to repeat), each tried once. When all three fail,
// the buggy caller assumes none took effect and resends the batch, 15 in
// one deposit; a failed instalment whose response was lost was paid, so
// the purse ends above 15. The fixed caller reads the balance and pays
// what is missing. One or two failed instalments do no harm (the caller
// leaves them to a later reconciliation): only three faults at once, one
// of them after delivery, show the bug.
func resendBatch(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("PURSE", func(st *object.State) object.Object { return &Account{st: st} })
		pay := func(key string, n, retries int) error {
			s, err := ns.GetByName("p", stub.MaxRetries(retries))
			if err != nil {
				return err
			}
			_, err = s.Call(ctx, "Deposit", key, n)
			return err
		}
		failed := 0
		for _, key := range []string{"i-1", "i-2", "i-3"} {
			if pay(key, 5, 0) != nil {
				failed++
			}
		}
		if failed == 3 {
			owed := 15
			if fixed {
				paid, err := readInt(ctx, ns, "p", "Balance")
				if err != nil {
					return nil // nothing known: leave it to the reconciliation
				}
				owed -= paid
			}
			if owed > 0 {
				_ = pay("batch", owed, 10)
			}
		}
		if paid, err := readInt(ctx, ns, "p", "Balance"); err == nil && paid > 15 {
			return fmt.Errorf("paid %d, more than the 15 owed: the batch was resent after a paid instalment", paid)
		}
		return nil
	}
}

var batchResent = Bug{
	Name: "batch-resent", Kind: "a batch resent whole when each of its three sends failed",
	Needs: "three faults at once: all three instalments fail, one after delivery (quiet rates)",
	Buggy: resendBatch(false), Fixed: resendBatch(true),
	Rates: QuietRates, FoundBy: FoundByExhaustive,
}

// LadderRates are the rates of the fallback ladder: 1% of attempts lose
// their request, 1% their response. A fuzz input's decision byte 255 (or
// 253, 254) loses an attempt's request, 251 or 252 its response
// (transport.Choices).
var LadderRates = transport.Rates{transport.LoseRequest: 0.01, transport.LoseResponse: 0.01}

// LadderRungs is how many charges the fallback ladder tries, each once,
// before it parks the charge in its outbox.
const LadderRungs = 4

// chargeLadder charges order-1 through a hand-written fallback ladder:
// one attempt, then after 100 ms a second through a fresh stub, after a
// second a third, after ten seconds a fourth, each under the order's key
// (the till charges a key once). When all four failed, it parks the
// charge in an outbox, which charges it with retries. Buggy, the outbox
// charges under a key of its own, so a rung whose response was lost (it
// charged) is charged again; fixed, under the order's key. Each rung is
// code of its own that runs only when the rungs before it failed: a
// coverage-guided fuzzer that has an input reaching rung k keeps it (new
// coverage), and one byte edit (byte k, the fault of rung k+1's attempt)
// reaches rung k+1.
func chargeLadder(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("TILL", NewTill)
		try := func(wait time.Duration) error {
			if err := rt.Sleep(ctx, wait); err != nil {
				return err
			}
			s, err := ns.GetByName("shop", stub.MaxRetries(0))
			if err != nil {
				return err
			}
			_, err = s.Call(ctx, "Charge", "order-1", 10)
			return err
		}
		if try(0) == nil {
			return checkCharged(ctx, ns, 10)
		}
		if try(100*time.Millisecond) == nil { // rung 2
			return checkCharged(ctx, ns, 10)
		}
		if try(time.Second) == nil { // rung 3
			return checkCharged(ctx, ns, 10)
		}
		if try(10*time.Second) == nil { // rung 4
			return checkCharged(ctx, ns, 10)
		}
		key := "outbox-1" // the outbox: all four rungs failed
		if fixed {
			key = "order-1"
		}
		s, err := ns.GetByName("shop", stub.MaxRetries(10))
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Charge", key, 10)
		return checkCharged(ctx, ns, 10)
	}
}

var fallbackLadder = Bug{
	Name: "fallback-ladder", Kind: "an outbox at the end of a fallback ladder that charges again under its own key",
	Needs: "four failed rungs in a row, one after delivery: a sequence a fuzzer extends a rung at a time",
	Buggy: chargeLadder(false), Fixed: chargeLadder(true),
	Rates: LadderRates, FoundBy: FoundByFuzz,
}
