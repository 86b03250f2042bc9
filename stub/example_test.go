package stub_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// Call invokes a method by name with copies of its arguments. Here the
// reply of the first AddOne is lost: the stub retries, the object refuses
// the duplicate (AddOne is not marked Retryable), and the caller sees the
// first, ambiguous error, while the item was in fact added once. That
// failure broke the stub (rule L2), so the caller reads through a new one.
func ExampleStub_Call() {
	plan := transport.Plan(transport.Rule{Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithSeed(7), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	_ = rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("shop")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "AddOne", "apple")
		var e *stub.Error
		if errors.As(err, &e) {
			fmt.Println("retryable:", e.Retryable, "fault:", e.Fault)
		}
		if s, err = ns.GetByName("shop"); err != nil { // the failure broke s (L2)
			return err
		}
		n, err := stub.CallAs[int](ctx, s, "Get", "apple")
		fmt.Println("apples:", n, err)
		return nil
	})
	c := rt.Calls()[0]
	fmt.Println(c.Outcome, "executions:", c.Executions(), "rejected:", c.Rejections())
	// Output:
	// retryable: true fault: lose-response
	// apples: 1 <nil>
	// duplicate-rejected executions: 1 rejected: 1
}
