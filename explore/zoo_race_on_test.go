//go:build race

package explore_test

// raceOn says this test binary runs under the race detector: the zoo's
// deep-bug tests sweep fewer seeds of random fault draws (see
// missSeeds).
const raceOn = true
