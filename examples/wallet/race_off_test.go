//go:build !race

package wallet_test

// raceFlags is "" when this test binary is not built with -race (see
// race_on_test.go).
const raceFlags = ""
