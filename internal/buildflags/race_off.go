//go:build !race

package buildflags

// Race is make test's race flags (the Makefile's RACE) when this binary
// is built with the race detector, and "" when it is not.
const Race = ""
