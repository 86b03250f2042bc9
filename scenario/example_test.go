package scenario_test

import (
	"fmt"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
)

// Parse checks a scenario before anything runs; Run runs it in a fresh
// runtime and checks its expectations. The classes the file may name are
// those registered with WithClasses: a constructor per class name (here one
// of the examples; a class of your own registers the same way).
func ExampleParse() {
	classes := scenario.WithClasses(map[string]runtime.Constructor{"inventory": examples.NewInventory})
	sc, err := scenario.Parse("lost-reply.yaml", []byte(`
seed: 7
namespaces: {INVENTORY: inventory}
stubs: {shop: {}}
faults:
  rules: [{method: AddOne, attempt: 1, fault: lose-response}]
calls:
  - stub: shop
    method: AddOne
    args: [apple]
    expect: {outcome: duplicate-rejected, executions: 1}
`), classes)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sc.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Calls[0]
	fmt.Println(c.Outcome, len(c.Attempts), "attempts,", c.Executions(), "execution; expectations met:", res.Passed())
	// Output: duplicate-rejected 2 attempts, 1 execution; expectations met: true
}

// Problems are reported as FILE:LINE: field: what is wrong and what is allowed.
func ExampleParse_errors() {
	_, err := scenario.Parse("bad.yaml", []byte(`namespaces: {INVENTORY: inventory}
stubs:
  shop: {options: {maxRetries: 12}}
calls:
  - {stub: shop, method: AddTwo}
`), scenario.WithBuiltInClasses(examples.Constructors()))
	fmt.Println(err)
	// Output:
	// bad.yaml:3: stubs.shop.options.maxRetries: 12 is out of range: retry.maxRetries must be an integer between 0 and 10
	// bad.yaml:5: calls[0].method: unknown method "AddTwo" of class inventory (namespace INVENTORY); it has AddOne, Get, SetQuantity
}

// A fault explorer runs one parsed scenario many times, each with its own
// seed and random faults added to the scenario's.
func ExampleScenario_Run() {
	sc, err := scenario.Load("../testdata/scenarios/ambiguous-delivery.yaml",
		scenario.WithBuiltInClasses(examples.Constructors()))
	if err != nil {
		fmt.Println(err)
		return
	}
	random := scenario.Faults{Rates: transport.Rates{transport.LoseRequest: 0.2}}
	failed := 0
	for seed := range uint64(100) {
		res, err := sc.Run(scenario.Seed(seed), scenario.AddFaults(random))
		if err != nil {
			fmt.Println(err)
			return
		}
		if !res.Passed() {
			failed++
		}
	}
	fmt.Println(failed > 0, "some seeds break expectations written for fixed faults")
	// Output: true some seeds break expectations written for fixed faults
}

// Without WithClasses no class is registered, and a file that names one is
// refused; an unknown class lists the registered ones.
func ExampleWithClasses() {
	file := []byte("namespaces: {W: wallet}\nstubs: {w: {}}\ncalls: [{stub: w, method: Get}]\n")
	_, err := scenario.Parse("wallet.yaml", file)
	fmt.Println(err)
	_, err = scenario.Parse("wallet.yaml", file, scenario.WithClasses(map[string]runtime.Constructor{
		"counter": examples.NewCounter, "ledger": examples.NewLedger,
	}))
	fmt.Println(err)
	// Output:
	// wallet.yaml:1: namespaces.W: unknown class "wallet"; no classes are registered (register classes with scenario.WithClasses)
	// wallet.yaml:1: namespaces.W: unknown class "wallet"; the registered classes are counter, ledger
}

// A count in an expectation is exact, or bounded (rule C7): {max: 1} in
// explore.expect lets an overloaded seed charge nobody and still fails
// one that charges twice. A count that is not met reads as it was written.
func ExampleCount() {
	sc, err := scenario.Parse("mail.yaml", []byte(`
namespaces: {MAIL: mailer}
stubs: {mail: {}}
faults:
  rules: [{method: Send, attempt: 1, fault: lose-response}]
calls:
  - stub: mail
    method: Send
    args: [ada@example.com, hi]
    expect: {attempts: {max: 2}, executions: {min: 1}}
explore:
  expect:
    effects: {email: {max: 1}}
`), scenario.WithBuiltInClasses(examples.Constructors()))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sc.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("expectations met:", res.Passed())
	for _, f := range res.CheckExplore() {
		fmt.Println(f)
	}
	fmt.Println(scenario.AtMost(1).Describe("charge"), "|", scenario.Count{Min: 1, Max: 2}.Describe("charge"))
	// Output:
	// expectations met: true
	// mail.yaml:13: explore.expect.effects.email: expected at most 1 email effect, got 2 email effects
	// at most 1 charge | 1 to 2 charges
}
