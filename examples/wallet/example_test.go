package wallet_test

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/examples/wallet"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// A deposit whose reply is lost is retried with the same request; Deposit
// is marked Retryable and runs again, and its transaction id makes the
// second run change nothing: the balance holds the money once.
func Example() {
	plan := transport.Plan(transport.Rule{Method: "Deposit", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithSeed(7), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("WALLET", wallet.New)
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("alice")
		if err != nil {
			return err
		}
		n, err := wallet.NewStub(s).Deposit(ctx, "tx-1", 50) // the typed client (wallet_stub.go)
		fmt.Println("deposit:", n, err)
		rec := rt.Calls()[0]
		fmt.Println("attempts:", len(rec.Attempts), "executions:", rec.Executions(), "outcome:", rec.Outcome)
		return nil
	})
	fmt.Println(err)
	// Output:
	// deposit: 50 <nil>
	// attempts: 2 executions: 2 outcome: recovered
	// <nil>
}
