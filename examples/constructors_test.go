package examples_test

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/stretchr/testify/assert"
)

// Constructors is the built-in registry scenario.WithBuiltInClasses is given
// by dosim: the same names and constructors as Classes, and a fresh map on
// every call (a caller may add to it).
func TestConstructorsIsTheBuiltInRegistry(t *testing.T) {
	reg := examples.Constructors()
	assert.Equal(t, examples.ClassNames(), slices.Sorted(maps.Keys(reg)))
	for _, c := range examples.Classes() {
		assert.Equal(t, reflect.ValueOf(c.New).Pointer(), reflect.ValueOf(reg[c.Name]).Pointer(), c.Name)
	}
	reg["wallet"] = nil
	assert.NotContains(t, examples.Constructors(), "wallet")
}
