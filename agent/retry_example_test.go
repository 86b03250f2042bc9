package agent_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// gateway charges cards through a payment API that times out twice.
type gateway struct {
	st       *object.State
	timeouts int
}

func (g *gateway) Methods() object.Methods {
	return object.Methods{"Charge": object.Func(g.Charge)}
}

// Charge retries the API call with jittered backoff, in virtual time.
func (g *gateway) Charge(ctx context.Context, cents int) (string, error) {
	return agent.RetryValue(ctx, func(ctx context.Context, attempt int) (string, error) {
		if g.timeouts < 2 {
			g.timeouts++
			return "", errors.New("payment API timed out")
		}
		return fmt.Sprintf("charged %d cents on attempt %d", cents, attempt), nil
	}, agent.RetryOptions{MaxAttempts: new(5), BaseDelayMs: new(200)})
}

// Retry makes up to MaxAttempts attempts, sleeping a seeded full-jitter
// delay between them; the trace records each retry.
func ExampleRetry() {
	rt := runtime.New(runtime.WithSeed(7))
	defer rt.Close()
	ns := rt.Namespace("GATEWAY", func(st *object.State) object.Object { return &gateway{st: st} })
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("shop")
		if err != nil {
			return err
		}
		receipt, err := stub.CallAs[string](ctx, s, "Charge", 1250)
		fmt.Println(receipt)
		return err
	})
	fmt.Println(err)
	for _, e := range rt.Events() {
		fmt.Println(e.At, e.Kind, e.Text())
	}
	// Output:
	// charged 1250 cents on attempt 3
	// <nil>
	// 0s retry attempt=1 delay=277ms err="payment API timed out"
	// 277ms retry attempt=2 delay=643ms err="payment API timed out"
}
