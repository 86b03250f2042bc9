package examples_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule S6, through the booth's typed stub (examples_stub.go): Hold and Pay
// lose their first replies and run again for the same request; the key
// makes each retry answer what the first run answered, so the seat is held
// once and the card charged once.
func TestS6_BoothTypedStubHoldsAndPaysOnce(t *testing.T) {
	plan := transport.Plan(
		transport.Rule{Method: "Hold", Attempt: 1, Fault: transport.LoseResponse},
		transport.Rule{Method: "Pay", Attempt: 1, Fault: transport.LoseResponse},
	)
	rt := run(t, plan, examples.NewBooth, func(ctx context.Context, s *stub.Stub, _ *runtime.Runtime) {
		booth := examples.NewBoothStub(s)
		held, err := booth.Hold(ctx, "ada-1", 3, "ada")
		require.NoError(t, err)
		assert.Contains(t, held, "seat 3 held by ada until ")
		taken, err := booth.Hold(ctx, "bob-1", 3, "bob")
		require.NoError(t, err)
		assert.Equal(t, "seat 3 is taken", taken)
		paid, err := booth.Pay(ctx, "ada-1")
		require.NoError(t, err)
		assert.Equal(t, "paid for seat 3", paid)
		holder, err := booth.Holder(ctx, 3)
		require.NoError(t, err)
		assert.Equal(t, "ada", holder)
	})
	for _, c := range rt.Calls() {
		if c.Method == "Pay" {
			assert.Equal(t, 2, c.Executions(), "Pay ran again for its retry")
		}
	}
	charges := 0
	for _, e := range rt.Effects() {
		if e.Kind == "charge" {
			charges++
		}
	}
	assert.Equal(t, 1, charges, "Pay ran twice, charged once")
}
