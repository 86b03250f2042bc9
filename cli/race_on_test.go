//go:build race

package cli

// raceOn says this test binary runs under the race detector, where each
// seed is some ten times dearer: a test that sweeps many seeds to try
// their replay lines sweeps fewer then.
const raceOn = true
