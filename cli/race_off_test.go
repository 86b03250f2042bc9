//go:build !race

package cli

// raceOn says this test binary runs under the race detector (see
// race_on_test.go).
const raceOn = false
