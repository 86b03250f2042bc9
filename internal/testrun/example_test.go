package testrun_test

import (
	"fmt"

	"github.com/dosim/dosim/internal/testrun"
)

type named string

func (n named) Name() string { return string(n) }

// ReplayCommand names the package by its import path, so that the printed
// command runs from anywhere in the module (rule U4), and passes the seed
// to the test binary, which has the flag: every binary that links this
// package does.
func ExampleReplayCommand() {
	fmt.Println(testrun.ReplayCommand(named("TestWallet/deposit"), 42))
	// Output: go test github.com/dosim/dosim/internal/testrun -run '^TestWallet$/^deposit$' -count=1 -dosim.seed=42
}
