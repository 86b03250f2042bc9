//go:build !race

package explore_test

// raceOn says this test binary runs under the race detector (see
// race_on_test.go).
const raceOn = false
