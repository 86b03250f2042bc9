package render_test

import (
	"context"
	"fmt"
	"os"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// A run's call records shown as the text timeline, one row per attempt:
// AddOne's reply is lost and its retry is refused as a duplicate (rule S6).
func ExampleText() {
	plan := transport.Plan(transport.Rule{Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithSeed(7), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("shop")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "AddOne", "apple") // ambiguous: the caller cannot tell it ran
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	report := render.Report{Name: "lost-reply", Seed: rt.Seed(), Calls: rt.Calls(), Labels: []string{`AddOne("apple")`}}
	if err := render.Text(os.Stdout, report, render.TextOptions{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// lost-reply (seed 7)
	//
	// #  START  END    OBJECT          CALL             TRY  LINK           OBJECT DID             OUTCOME
	// 1  0s     0s     INVENTORY/shop  AddOne("apple")  1    lose-response  executed
	//    347ms  347ms                                   2    delivered      rejected as duplicate  duplicate-rejected
	//    error: INVENTORY/shop AddOne, attempt 1: reply lost (lose-response): the caller cannot tell whether the method ran (it did) [retryable]
}
