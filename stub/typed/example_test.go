package typed_test

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/examples/wallet"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub/typed"
)

// What a generated method does, by hand: Call through a Source. Fresh
// takes a new stub from the namespace for each call.
func ExampleCall() {
	rt := runtime.New(runtime.WithSeed(7))
	defer rt.Close()
	ns := rt.Namespace("WALLET", wallet.New)
	err := rt.Run(func(ctx context.Context) error {
		alice := typed.Fresh(ns, "alice")
		n, err := typed.Call[int](ctx, alice, "Deposit", "tx-1", 50)
		fmt.Println("deposit:", n, err)
		n, err = wallet.FreshStub(ns, "alice").Balance(ctx) // the same, generated
		fmt.Println("balance:", n, err)
		return nil
	})
	fmt.Println(err)
	// Output:
	// deposit: 50 <nil>
	// balance: 50 <nil>
	// <nil>
}
