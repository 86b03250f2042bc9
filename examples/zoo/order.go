package zoo

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// Parcel keeps an order's status. Buggy, the last update to arrive wins:
// it assumes updates arrive in the order they were sent. Fixed, an update
// older than the status it finds is ignored (the statuses only move on).
type Parcel struct {
	st    *object.State
	fixed bool
}

var statusRank = map[string]int{"paid": 1, "packed": 2, "shipped": 3}

// Methods lists Set (not marked) and Status (marked Retryable: a read).
func (p *Parcel) Methods() object.Methods {
	return object.Methods{"Set": object.Func(p.Set), "Status": object.Retryable(p.Status)}
}

// Set records status.
func (p *Parcel) Set(ctx context.Context, status string) error {
	if p.fixed {
		cur, err := p.Status(ctx)
		if err != nil {
			return err
		}
		if statusRank[cur] >= statusRank[status] {
			return nil
		}
	}
	return p.st.Storage().Put(ctx, "status", status)
}

// Status returns the status.
func (p *Parcel) Status(ctx context.Context) (string, error) {
	var cur string
	_, err := p.st.Storage().Get(ctx, "status", &cur)
	return cur, err
}

// paidThenShipped starts two updates on one stub, "paid" then "shipped",
// without waiting for the first (rule L1 keeps their first attempts in
// order, but a retry travels on a fresh connection), and checks that the
// parcel ends "shipped" when that update succeeded.
func paidThenShipped(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("PARCEL", func(st *object.State) object.Object { return &Parcel{st: st, fixed: fixed} })
		s, err := ns.GetByName("order-7")
		if err != nil {
			return err
		}
		paid := s.Start(ctx, "Set", "paid")
		shipped := s.Start(ctx, "Set", "shipped")
		_, _ = paid.Await()
		_, errShipped := shipped.Await()
		check, err := ns.GetByName("order-7", stub.MaxRetries(10))
		if err != nil {
			return err
		}
		got, err := stub.CallAs[string](ctx, check, "Status")
		if err == nil && errShipped == nil && got != "shipped" {
			return fmt.Errorf("the parcel ends %q, want shipped: the retry of an earlier update overtook a later one", got)
		}
		return nil
	}
}

var overtakenRetry = Bug{
	Name: "overtaken-retry", Kind: "a retry overtaken by a later call of the same caller",
	Needs:     "one fault: the first update's request lost, so its retry comes after the second",
	Elsewhere: "overtaken-update (the same class, updates from three callers, found by latency alone)",
	Buggy:     paidThenShipped(false), Fixed: paidThenShipped(true), FoundBy: FoundByRandom,
}
