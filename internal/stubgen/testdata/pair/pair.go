// Package pair holds two classes, one of which calls the other through
// the other's typed stub: the generator writes both stubs although the
// package does not compile until it has.
package pair

import (
	"context"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

//go:generate go run github.com/dosim/dosim/cmd/dosim-gen -type Billing,Limiter

// Billing keeps a total.
type Billing struct{ st *object.State }

// Methods lists Charge.
func (b *Billing) Methods() object.Methods {
	return object.Methods{"Charge": object.Func(b.Charge)}
}

// Charge adds cents to the total and returns it.
func (b *Billing) Charge(ctx context.Context, cents int) (int, error) {
	var total int
	if _, err := b.st.Storage().Get(ctx, "total", &total); err != nil {
		return 0, err
	}
	total += cents
	return total, b.st.Storage().Put(ctx, "total", total)
}

// Limiter bills each use through Billing's typed stub.
type Limiter struct{ st *object.State }

// Methods lists Use.
func (l *Limiter) Methods() object.Methods {
	return object.Methods{"Use": object.Func(l.Use)}
}

// Use charges n to the account.
func (l *Limiter) Use(ctx context.Context, n int) (int, error) {
	ns, err := runtime.Binding(l.st, "BILLING")
	if err != nil {
		return 0, err
	}
	return FreshBillingStub(ns, "acct").Charge(ctx, n)
}
