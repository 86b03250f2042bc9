package main

import (
	"testing"

	"github.com/dosim/dosim/internal/buildflags"
)

// TestMain gives the go commands the tests run (go list, under
// golang.org/x/tools/go/packages; go vet) the flags this binary was
// built with, so that they reuse its build (internal/buildflags).
func TestMain(m *testing.M) { buildflags.Main(m) }
