package examples_test

import (
	"context"
	"fmt"
	"os"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// The seed's example: the first reply of each call is lost. AddOne is not
// marked, so its retry is refused and it ran once; SetQuantity is marked
// Retryable, so its retry runs it again, harmlessly.
func Example_ambiguousDelivery() {
	plan := transport.Plan(
		transport.Rule{Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse},
		transport.Rule{Method: "SetQuantity", Attempt: 1, Fault: transport.LoseResponse},
	)
	rt := runtime.New(runtime.WithSeed(7), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	_ = rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("shop")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "SetQuantity", "apple", 3)
		fmt.Println("SetQuantity:", err)
		_, err = s.Call(ctx, "AddOne", "apple")
		fmt.Println("AddOne:", err)
		if s, err = ns.GetByName("shop"); err != nil { // AddOne's failure broke s (rule L2)
			return err
		}
		n, err := stub.CallAs[int](ctx, s, "Get", "apple")
		fmt.Println("apples:", n, err)
		return nil
	})
	fmt.Println()
	_ = runtime.WriteTable(os.Stdout, rt.Calls())
	// Output:
	// SetQuantity: <nil>
	// AddOne: INVENTORY/shop AddOne, attempt 1: reply lost (lose-response): the caller cannot tell whether the method ran (it did) [retryable]
	// apples: 4 <nil>
	//
	// CALL  OBJECT          METHOD       ATTEMPT  START  END    LINK           OBJECT DID             RESULT
	// 1     INVENTORY/shop  SetQuantity           0s     347ms                                        recovered
	//                                    1        0s     0s     lose-response  executed
	//                                    2        347ms  347ms  delivered      executed
	// 2     INVENTORY/shop  AddOne                347ms  547ms                                        duplicate-rejected: INVENTORY/shop AddOne, attempt 1: reply lost (lose-response): the caller cannot tell whether the method ran (it did) [retryable]
	//                                    1        347ms  347ms  lose-response  executed
	//                                    2        547ms  547ms  delivered      rejected as duplicate
	// 3     INVENTORY/shop  Get                   547ms  547ms                                        ok
	//                                    1        547ms  547ms  delivered      executed
}
