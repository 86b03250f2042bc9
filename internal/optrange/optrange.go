// Package optrange holds the ranges of dosim explore's options, once: the
// explore block of a scenario file, the dosim explore flags and
// explore.Options all check a value against the same range and say what
// is allowed in the same words. An option is named as its flag and its
// explore-block key name it ("max-faults").
package optrange

import (
	"fmt"
	"math"
	"time"
)

// Int is the range of an option that takes a whole number.
type Int struct {
	Name     string // the flag's name and the explore block's key
	Min, Max int
	Want     string // what is allowed, in words
}

// Holds reports whether v is in the range.
func (r Int) Holds(v int) bool { return v >= r.Min && v <= r.Max }

// Duration is the range of an option that takes a duration.
type Duration struct {
	Name     string
	Min, Max time.Duration
	Want     string
}

// Holds reports whether d is in the range.
func (r Duration) Holds(d time.Duration) bool { return d >= r.Min && d <= r.Max }

// MaxHorizon is the longest horizon of virtual time a run may take, and
// its background work go on after it: a year.
const MaxHorizon = 365 * 24 * time.Hour

// The ranges of explore's options.
var (
	Seeds        = Int{Name: "seeds", Min: 1, Max: math.MaxInt, Want: "1 or more seeds"}
	Workers      = Int{Name: "workers", Min: 1, Max: 256, Want: "1 to 256 seeds checked in parallel"}
	MaxAmbiguous = Int{Name: "max-ambiguous", Min: 1, Max: 20, Want: "1 to 20 turns cut short (the check is exponential in it)"}
	Depth        = Int{Name: "depth", Min: 1, Max: 10, Want: "1 to 10 (PCT's d: the ordering constraints a bug may need)"}
	MaxFaults    = Int{Name: "max-faults", Min: 1, Max: 4, Want: "1 to 4 faults per placement (the tree grows as the decision points to the power of the faults)"}
	MaxRuns      = Int{Name: "max-runs", Min: 1, Max: math.MaxInt, Want: "1 or more runs"}
	Horizon      = Duration{Name: "horizon", Min: time.Nanosecond, Max: MaxHorizon, Want: "a virtual duration from 1ns to 8760h (a year), such as 24h, or off (no liveness check, no bound)"}
	ShrinkTime   = Duration{Name: "shrink-time", Min: time.Millisecond, Max: math.MaxInt64, Want: "a duration of 1ms or more, such as 60s"}
)

// MinChecked is the range of min-checked, a share.
const MinCheckedWant = "a share from 0 to 1, such as 0.9 (0: no minimum)"

// MinCheckedHolds reports whether v is a share from 0 to 1.
func MinCheckedHolds(v float64) bool { return v >= 0 && v <= 1 }

// Text is an option's value as the messages quote it.
func Text(v any) string {
	switch v := v.(type) {
	case time.Duration:
		return v.String()
	case string:
		return v
	}
	return fmt.Sprint(v)
}
