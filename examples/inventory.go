// Package examples holds the small objects dosim's demo, scenarios and
// documentation use. Each is a pattern to read: how to write methods, how
// to mark the idempotent ones, and what goes wrong when a mark is wrong.
package examples

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
)

// Inventory counts items in stock. SetQuantity is idempotent (setting 3
// twice leaves 3) and is marked Retryable; AddOne is not (adding twice adds
// two), so it is left unmarked and never runs twice because of a retry.
type Inventory struct {
	st *object.State
}

// NewInventory is the Inventory constructor for runtime.Namespace.
func NewInventory(st *object.State) object.Object { return &Inventory{st: st} }

// Methods lists Inventory's methods.
func (i *Inventory) Methods() object.Methods {
	return object.Methods{
		"SetQuantity": object.Retryable(i.SetQuantity),
		"AddOne":      object.Func(i.AddOne),
		"Get":         object.Func(i.Get),
	}
}

// SetQuantity sets the quantity of item to n.
func (i *Inventory) SetQuantity(ctx context.Context, item string, n int) error {
	if n < 0 {
		return fmt.Errorf("quantity of %q must be >= 0, got %d", item, n)
	}
	return i.st.Storage().Put(ctx, item, n)
}

// AddOne adds one item and returns the new quantity.
func (i *Inventory) AddOne(ctx context.Context, item string) (int, error) {
	n, _, err := object.GetAs[int](ctx, i.st.Storage(), item)
	if err != nil {
		return 0, err
	}
	n++
	return n, i.st.Storage().Put(ctx, item, n)
}

// Get returns the quantity of item (0 if never set).
func (i *Inventory) Get(ctx context.Context, item string) (int, error) {
	var n int
	_, err := i.st.Storage().Get(ctx, item, &n)
	return n, err
}
