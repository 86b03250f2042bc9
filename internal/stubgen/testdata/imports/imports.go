// Package imports declares a name the typed stubs' file imports.
package imports

import (
	"context"

	"github.com/dosim/dosim/object"
)

// typed is the name taken.
var typed = 1

// Box is a class.
type Box struct{}

// Methods lists one method.
func (Box) Methods() object.Methods {
	return object.Methods{"Size": object.Func(func(ctx context.Context) (int, error) { return typed, nil })}
}
