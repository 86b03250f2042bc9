package explore_test

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
)

// RunFunc explores a Go function's fault space: each seed runs it on a
// fresh runtime with random faults and checks the S rules,
// linearizability against the wallet class itself and the function's own
// error. From go test, dosimtest.Func runs the same sweep and fails the
// test with what it found.
func ExampleRunFunc() {
	sum, err := explore.RunFunc(explore.Options{Seeds: 200}, func(ctx context.Context, rt *runtime.Runtime) error {
		s, err := rt.Namespace("WALLET", newWallet).GetByName("alice")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Deposit", "tx-1", 50) // errors may be expected under faults
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("seeds:", sum.Ran, "clean:", sum.Clean())
	// Output: seeds: 200 clean: true
}
