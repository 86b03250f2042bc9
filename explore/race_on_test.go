//go:build race

package explore_test

// raceOn says this test binary runs under the race detector, which makes
// each seed some ten times dearer and checks the code a sweep runs, not
// how many seeds it runs: a sweep whose claim is a count runs a tenth of
// it then (countSeeds), or skips where the package's other tests run its
// code, and make test runs it again, whole, without the detector (see
// size_test.go).
const raceOn = true
