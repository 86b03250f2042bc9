// Package good holds classes in every form of Methods dosim-gen reads.
package good

import (
	"context"
	"time"

	"github.com/dosim/dosim/object"
)

//go:generate go run github.com/dosim/dosim/cmd/dosim-gen -type Shop,Cart

// Item is a plain-data result.
type Item struct {
	Name  string
	Bytes map[string][]byte
}

// Cart is an RPC target: a caller of Shop.Open gets a stub of it.
type Cart struct {
	object.RpcTarget
	items []string
}

// Methods lists the cart's methods.
func (c *Cart) Methods() object.Methods {
	return object.Methods{"Add": object.Func(c.Add)}
}

// Add puts item in the cart.
func (c *Cart) Add(ctx context.Context, item string) error {
	c.items = append(c.items, item)
	return nil
}

const getName = "get"

// Shop has a value receiver.
type Shop struct{}

// Methods lists the shop's methods, in every form dosim-gen reads.
func (s Shop) Methods() object.Methods {
	return (object.Methods{
		"Open":   object.Func(s.Open),     // an RPC target's stub
		getName:  object.Retryable(s.Get), // a constant key, lower-case
		"Rename": object.Func(s.Rename),   // parameters named like the generated code's
		"Total":  object.Retryable(total), // a plain function
		"Wait": object.Func(func(ctx context.Context, d time.Duration, _ int) error {
			return nil
		}), // a literal, an imported type, an unnamed parameter
	})
}

// Open opens a cart.
func (s Shop) Open(ctx context.Context) (*Cart, error) { return &Cart{}, nil }

// Get returns the item.
//
// It has a second paragraph.
func (s Shop) Get(ctx context.Context, name string) (Item, error) { return Item{Name: name}, nil }

// Rename renames an item.
func (s Shop) Rename(ctx context.Context, typed string, c map[string][]byte, ctx2 []any) (*Item, error) {
	return &Item{Name: typed, Bytes: c}, nil
}

func total(ctx context.Context, prices []int) (int, error) {
	n := 0
	for _, p := range prices {
		n += p
	}
	return n, nil
}
