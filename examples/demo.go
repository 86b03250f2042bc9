package examples

import (
	"context"
	"errors"
	"fmt"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// DemoFaults is the demo's fault plan: the first reply of AddOne and of
// SetQuantity to the "apple" shop is lost on the way back.
func DemoFaults() *transport.FaultPlan {
	return transport.Plan(
		transport.Rule{Object: "apple", Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse},
		transport.Rule{Object: "apple", Method: "SetQuantity", Attempt: 1, Fault: transport.LoseResponse},
	)
}

// Demo runs the inventory demo on rt: three shops, each stocked with
// SetQuantity and bumped with AddOne by two concurrent callers, then read
// back with Get. It returns the final quantity of every shop.
func Demo(ctx context.Context, rt *runtime.Runtime, ns *runtime.Namespace) (map[string]int, error) {
	shops := []string{"apple", "pear", "plum"}
	g := rt.Group(ctx)
	for _, shop := range shops {
		s, err := ns.GetByName(shop)
		if err != nil {
			return nil, err
		}
		if _, err := s.Call(ctx, "SetQuantity", "stock", 10); err != nil {
			return nil, fmt.Errorf("stocking %s: %w", shop, err)
		}
		for range 2 {
			g.Go(func(ctx context.Context) error {
				_, err := s.Call(ctx, "AddOne", "stock")
				var e *stub.Error
				if errors.As(err, &e) && e.Retryable {
					return nil // an ambiguous failure: the trace shows what happened
				}
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, shop := range shops {
		s, err := ns.GetByName(shop)
		if err != nil {
			return nil, err
		}
		n, err := stub.CallAs[int](ctx, s, "Get", "stock")
		if err != nil {
			return nil, err
		}
		out[shop] = n
	}
	return out, nil
}
