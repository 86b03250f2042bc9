package wallet_test

import (
	"testing"

	"github.com/dosim/dosim/examples/wallet"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
)

// classes is the wallet project's registry: the name its scenarios use.
var classes = scenario.WithClasses(map[string]runtime.Constructor{"wallet": wallet.New})

// The scenario of an ambiguous deposit runs on the user's own class and
// meets every expectation in it (rule U1).
func TestU1_WalletScenario(t *testing.T) {
	sc, err := scenario.Load("testdata/wallet.yaml", classes)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sc.Run(scenario.Seed(7))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() {
		t.Fatalf("seed 7: %d expectation(s) failed, the first: %v", len(res.Failures), res.Failures[0])
	}
}
