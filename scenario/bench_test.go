package scenario_test

import (
	"testing"

	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
)

// BenchmarkRunScenario runs ambiguous-delivery.yaml once per iteration,
// with a new seed and random faults, checking its expectations: the unit
// of work of a fault explorer.
func BenchmarkRunScenario(b *testing.B) {
	sc, err := scenario.Load("../testdata/scenarios/ambiguous-delivery.yaml", builtIns)
	if err != nil {
		b.Fatal(err)
	}
	random := scenario.AddFaults(scenario.Faults{Rates: transport.Rates{transport.LoseResponse: 0.1}})
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		seed++
		if _, err := sc.Run(scenario.Seed(seed), random); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse parses the same scenario: what Run avoids doing.
func BenchmarkParse(b *testing.B) {
	data := []byte(head + "calls: [{stub: shop, method: AddOne, args: [apple], expect: {outcome: ok}}]\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := scenario.Parse("b.yaml", data, builtIns); err != nil {
			b.Fatal(err)
		}
	}
}
