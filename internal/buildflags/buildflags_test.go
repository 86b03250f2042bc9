package buildflags

import (
	"os"
	"regexp"
	"testing"
)

// raceFlags are the Makefile's RACE flags, which race_on.go repeats.
const raceFlags = "-race -gcflags=modernc.org/sqlite/lib=-race=false"

// The Makefile's RACE is the flags a race build of this package says it
// was built with.
func TestRaceIsTheMakefiles(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RACE \?= (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no RACE ?= ...")
	}
	if string(m[1]) != raceFlags {
		t.Fatalf("the Makefile's RACE is %q, race_on.go's %q: make them one", m[1], raceFlags)
	}
	if Race != "" && Race != raceFlags {
		t.Fatalf("Race is %q, want %q or empty", Race, raceFlags)
	}
}

// Setenv sets GOFLAGS to Race in a race build, leaves a GOFLAGS the user
// set alone, and does nothing in a build without the race detector.
func TestSetenv(t *testing.T) {
	t.Setenv("GOFLAGS", "")
	if err := Setenv(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("GOFLAGS"); got != Race {
		t.Fatalf("GOFLAGS = %q, want %q", got, Race)
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	if err := Setenv(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("GOFLAGS"); got != "-mod=mod" {
		t.Fatalf("a GOFLAGS the user set became %q", got)
	}
}
