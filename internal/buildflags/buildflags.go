// Package buildflags tells a test that runs the go command with which
// flags its own binary was built, so that the child build reuses what
// the test's build compiled (SQLite, most of all, costs some 40 s of CPU
// each time it is compiled with other flags) instead of compiling it
// again.
package buildflags

import (
	"os"
	"strings"
	"testing"
)

// Flags is the flags this binary was built with that a child build must
// repeat to reuse its build: Race and Tags, or "" for neither.
func Flags() string {
	return strings.TrimSpace(Race + " " + Tags)
}

// Setenv sets GOFLAGS, for the go commands the test binary runs from now
// on (go list under golang.org/x/tools/go/packages, go vet, go build), to
// Flags, unless GOFLAGS is set already. Call it from TestMain. A child
// that builds a tool it then runs (go build of a vettool) should clear
// GOFLAGS for that build: a tool built with the race detector runs many
// times slower.
func Setenv() error {
	if Flags() == "" || os.Getenv("GOFLAGS") != "" {
		return nil
	}
	return os.Setenv("GOFLAGS", Flags())
}

// Main is a TestMain for a package whose tests run the go command: it
// calls Setenv, then runs the tests and exits with their status.
func Main(m *testing.M) {
	if err := Setenv(); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
