package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// TestReadmeFirstTest was the README's first test before issue 33 gave it
// a class of its own (rule S6: an unmarked method is not run twice; rule
// L2: a stub a link failure broke is replaced). It fails through Run's
// error, never with t.Fatalf inside Run (cli's
// TestReadmeFirstTestFailsOutsideRun checks the README's).
func TestReadmeFirstTest(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithSeed(7), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)

	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("shop")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "AddOne", "apple") // reply lost: an ambiguous, retryable error
		var e *stub.Error
		if !errors.As(err, &e) || !e.Retryable {
			return fmt.Errorf("want a retryable error, got %w", err) // fail through Run's error ("do | do not")
		}
		// The failure broke s (rule L2): read through a new stub.
		if s, err = ns.GetByName("shop"); err != nil {
			return err
		}
		n, err := stub.CallAs[int](ctx, s, "Get", "apple")
		if err == nil && n != 1 { // it ran once: the retry was refused as a duplicate
			return fmt.Errorf("apples = %d, want 1", n)
		}
		return err
	})
	if err != nil {
		t.Fatalf("seed %d: %v", rt.Seed(), err)
	}
}
