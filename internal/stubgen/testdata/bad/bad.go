// Package bad holds classes whose Methods dosim-gen refuses.
package bad

import (
	"context"

	"github.com/dosim/dosim/internal/stubgen/testdata/bad/other"
	"github.com/dosim/dosim/object"
)

func ok(ctx context.Context) error { return nil }

// Inner has Methods, which Promoted only inherits.
type Inner struct{}

// Methods lists one method.
func (Inner) Methods() object.Methods { return object.Methods{"A": object.Func(ok)} }

// Promoted embeds Inner.
type Promoted struct{ Inner }

// NoMethods has none.
type NoMethods struct{}

// Built builds its map in steps.
type Built struct{}

// Methods builds the map.
func (Built) Methods() object.Methods {
	m := object.Methods{}
	m["A"] = object.Func(ok)
	return m
}

// Called returns another function's map.
type Called struct{}

// Methods calls elsewhere.
func (Called) Methods() object.Methods { return Inner{}.Methods() }

var entry = object.Func(ok)

// Computed has an entry computed elsewhere.
type Computed struct{}

// Methods uses entry.
func (Computed) Methods() object.Methods { return object.Methods{"A": entry} }

var name = "A"

// KeyVar has a key that is not constant.
type KeyVar struct{}

// Methods uses name.
func (KeyVar) Methods() object.Methods { return object.Methods{name: object.Func(ok)} }

// NoCtx has a method without a context first.
type NoCtx struct{}

// Methods lists it.
func (NoCtx) Methods() object.Methods {
	return object.Methods{"A": object.Func(func(n int) error { return nil })}
}

// Variadic has a variadic method.
type Variadic struct{}

// Methods lists it.
func (Variadic) Methods() object.Methods {
	return object.Methods{"A": object.Func(func(ctx context.Context, n ...int) error { return nil })}
}

// NoError has a method that returns no error.
type NoError struct{}

// Methods lists it.
func (NoError) Methods() object.Methods {
	return object.Methods{"A": object.Func(func(ctx context.Context) int { return 0 })}
}

// NotFunc wraps a number.
type NotFunc struct{}

// Methods lists it.
func (NotFunc) Methods() object.Methods { return object.Methods{"A": object.Func(42)} }

// Dashed has a name that is not a Go identifier.
type Dashed struct{}

// Methods lists it.
func (Dashed) Methods() object.Methods { return object.Methods{"add-one": object.Func(ok)} }

// Clash has two names that give one Go method.
type Clash struct{}

// Methods lists them.
func (Clash) Methods() object.Methods {
	return object.Methods{"get": object.Func(ok), "Get": object.Func(ok)}
}

// Taken is a class whose stub's name is taken.
type Taken struct{}

// Methods lists one method.
func (Taken) Methods() object.Methods { return object.Methods{"A": object.Func(ok)} }

// TakenStub takes the name.
type TakenStub struct{}

// TooMany returns two values and an error.
type TooMany struct{}

// Methods lists it.
func (TooMany) Methods() object.Methods {
	return object.Methods{"Split": object.Func(func(ctx context.Context) (a, b int, err error) { return 0, 0, nil })}
}

// Nothing returns nothing.
type Nothing struct{}

// Methods lists it.
func (Nothing) Methods() object.Methods {
	return object.Methods{"Do": object.Func(func(ctx context.Context) {})}
}

// Callback takes a func: it crosses by reference (rule S11).
type Callback struct{}

// Methods lists it.
func (Callback) Methods() object.Methods {
	return object.Methods{"On": object.Func(func(ctx context.Context, name string, fn func(int)) error { return nil })}
}

// Piped returns a struct with a channel in it.
type Piped struct{}

type pipe struct{ C chan int }

// Methods lists it.
func (Piped) Methods() object.Methods {
	return object.Methods{"Open": object.Func(func(ctx context.Context) (pipe, error) { return pipe{}, nil })}
}

// Foreign takes a type another package does not export.
type Foreign struct{}

// Methods lists it.
func (Foreign) Methods() object.Methods { return object.Methods{"Put": object.Func(other.Put)} }
