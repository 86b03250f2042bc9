package runtime_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"go.uber.org/zap"
)

// A runtime runs everything in virtual time from one seed: the ten-second
// sleep below costs nothing.
func ExampleNew() {
	plan := transport.Plan(transport.Rule{Method: "Get", Delay: 3 * time.Second})
	rt := runtime.New(runtime.WithSeed(7), runtime.WithLogger(zap.NewNop()), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	err := rt.Run(func(ctx context.Context) error {
		if err := rt.Sleep(ctx, 10*time.Second); err != nil {
			return err
		}
		s, err := ns.GetByName("a")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Get", "apple") // 3 s of link latency
		return err
	})
	fmt.Println(err, rt.Now().Format(time.RFC3339))
	// Output: <nil> 2025-01-01T00:00:13Z
}

// GetByName mints a stub that retries as the Durable Objects runtime does;
// options bound its retries and deadline.
func ExampleNamespace_GetByName() {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	s, err := ns.GetByName("a", stub.MaxRetries(2), stub.TimeoutMs(1500))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s, s.MaxRetries(), s.Timeout())
	_, err = ns.GetByName("b", stub.MaxRetries(11))
	fmt.Println(err)
	// Output:
	// stub INVENTORY/a 2 1.5s
	// INVENTORY.Get(b): stub option maxRetries: 11 is out of range: retry.maxRetries must be an integer between 0 and 10
}

// Group runs concurrent callers; Calls returns the record of every call.
func ExampleRuntime_Group() {
	rt := runtime.New(runtime.WithSeed(3))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("shop")
		if err != nil {
			return err
		}
		g := rt.Group(ctx)
		for range 3 {
			g.Go(func(ctx context.Context) error { _, err := s.Call(ctx, "AddOne", "apple"); return err })
		}
		return g.Wait()
	})
	fmt.Println(err)
	for _, c := range rt.Calls() {
		fmt.Println(c.Method, c.Outcome, len(c.Attempts))
	}
	// Output:
	// <nil>
	// AddOne ok 1
	// AddOne ok 1
	// AddOne ok 1
}

// A Match selects a run's records, the same way for calls, effects, events
// and turns: here the calls to one method, and the emails one object sent.
func ExampleMatch() {
	rt := runtime.New(runtime.WithSeed(1))
	defer rt.Close()
	inv := rt.Namespace("INVENTORY", examples.NewInventory)
	mail := rt.Namespace("MAILER", examples.NewMailer)
	err := rt.Run(func(ctx context.Context) error {
		s, err := inv.GetByName("shop")
		if err != nil {
			return err
		}
		m, err := mail.GetByName("m")
		if err != nil {
			return err
		}
		for _, fruit := range []string{"apple", "pear"} {
			if _, err := s.Call(ctx, "AddOne", fruit); err != nil {
				return err
			}
		}
		_, err = m.Call(ctx, "Send", "ada", "hi")
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range rt.Calls(runtime.Match{Namespace: "INVENTORY", Method: "AddOne"}) {
		fmt.Println(c.Method, c.Args, c.Outcome)
	}
	for _, e := range rt.Effects(runtime.Match{Object: "m", Effect: "email"}) {
		fmt.Printf("%s %+v\n", e.Kind, e.Payload)
	}
	// Output:
	// AddOne [apple] ok
	// AddOne [pear] ok
	// email {To:ada Subject:hi}
}
