package amplify_test

import (
	"fmt"

	"github.com/dosim/dosim/amplify"
	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/transport"
)

// Worst is the arithmetic of rule S15: three attempts of yours around a
// stub that retries four times.
func ExampleWorst() {
	fmt.Println(amplify.Worst(3, 4))
	// Output: 15 <nil>
}

// Run simulates the loop under a fault: here every reply is lost, so a
// method marked Retryable runs on every delivery.
func ExampleRun() {
	res, err := amplify.Run(amplify.Options{Outer: 3, MaxRetries: 4,
		Class: examples.NewInventory, Method: "SetQuantity", Args: []any{"apple", 1},
		Fault: transport.LoseResponse, Rate: 1, Trials: 10, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Worst, res.Executions.Max, res.Failed)
	// Output: 15 15 10
}
