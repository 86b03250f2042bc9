//go:build race

package buildflags

// Race is make test's race flags (the Makefile's RACE) when this binary
// is built with the race detector, and "" when it is not.
// TestRaceIsTheMakefiles checks the two agree.
const Race = "-race -gcflags=modernc.org/sqlite/lib=-race=false -gcflags=modernc.org/libc/...=-race=false -gcflags=modernc.org/memory=-race=false"
