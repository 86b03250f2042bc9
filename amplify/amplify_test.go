package amplify_test

import (
	"context"
	"math"
	"testing"

	"github.com/dosim/dosim/amplify"
	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestWorstS15 is the arithmetic of rule S15 (was stub.Amplification): k
// attempts around a default stub can reach the object 5k times.
func TestWorstS15(t *testing.T) {
	worst, err := amplify.Worst(3, stub.DefaultMaxRetries)
	require.NoError(t, err)
	assert.Equal(t, 15, worst)
	worst, err = amplify.Worst(1, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, worst, "no retries, no loop: once")
	_, err = amplify.Worst(0, 4)
	assert.ErrorIs(t, err, stub.ErrRange)
	_, err = amplify.Worst(3, 11)
	assert.ErrorIs(t, err, stub.ErrRange)
	assert.ErrorContains(t, err, "maxRetries is 11")
	_, err = amplify.Worst(3, -1)
	assert.ErrorIs(t, err, stub.ErrRange)
}

func TestAmplifyWorstCaseS15(t *testing.T) {
	res, err := amplify.Run(amplify.Options{Outer: 3, MaxRetries: 4})
	require.NoError(t, err)
	assert.Equal(t, 15, res.Worst)
	assert.False(t, res.Simulated)

	// Every reply lost: a marked method runs on every delivery, 3 × 5 times.
	res, err = amplify.Run(amplify.Options{Outer: 3, MaxRetries: 4, Fault: transport.LoseResponse, Rate: 1, Trials: 20, Seed: 1,
		Class: examples.NewInventory, Method: "SetQuantity", Args: []any{"apple", 1}})
	require.NoError(t, err)
	assert.Equal(t, amplify.Distribution{P50: 15, P99: 15, Max: 15, Mean: 15, Counts: map[int64]int{15: 20}}, res.Executions)
	assert.Equal(t, int64(3), res.Calls.Max)
	assert.Equal(t, 20, res.Failed)
	// An unmarked one runs once per outer attempt: duplicates are refused.
	res, err = amplify.Run(amplify.Options{Outer: 3, MaxRetries: 4, Fault: transport.LoseResponse, Rate: 1, Trials: 20,
		Class: examples.NewInventory, Method: "AddOne", Args: []any{"apple"}})
	require.NoError(t, err)
	assert.Equal(t, int64(3), res.Executions.Max)
	assert.Equal(t, int64(15), res.Deliveries.Max)
}

func TestAmplifyIsSeeded(t *testing.T) {
	opts := amplify.Options{Outer: 3, MaxRetries: 4, Fault: transport.LoseWhileRunning, Rate: 0.4, Trials: 300, Seed: 7,
		Class: examples.NewInventory, Method: "SetQuantity", Args: []any{"apple", 1}}
	done := 0
	opts.Progress = func(n, total int) { done = n; assert.Equal(t, 300, total) }
	a, err := amplify.Run(opts)
	require.NoError(t, err)
	assert.Equal(t, 300, done)
	opts.Progress = nil
	b, err := amplify.Run(opts)
	require.NoError(t, err)
	a.Options.Progress = nil
	a.Options.Class, b.Options.Class = nil, nil // funcs never compare equal
	assert.Equal(t, a, b)
	assert.Equal(t, int64(1), a.Executions.P50, "most operations run once")
	assert.Greater(t, a.Executions.Max, int64(1), "some run again")
	assert.LessOrEqual(t, a.Executions.Max, int64(15))
	assert.Greater(t, a.OperationLatency.P99, a.OperationLatency.P50)
}

func TestAmplifyRejectsBadOptions(t *testing.T) {
	for _, o := range []amplify.Options{
		{Outer: 0, MaxRetries: 4},
		{Outer: amplify.MaxOuter + 1, MaxRetries: 4},
		{Outer: 3, MaxRetries: 11},
		{Outer: 3, MaxRetries: 4, TimeoutMs: 100},
		{Outer: 3, MaxRetries: 4, Class: examples.NewInventory},
		{Outer: 3, MaxRetries: 4, Fault: transport.LoseRequest, Rate: 0.5, Trials: 1},
		{Outer: 3, MaxRetries: 4, Fault: transport.LoseRequest, Rate: 2, Trials: 1},
		{Outer: 3, MaxRetries: 4, Fault: transport.LoseRequest, Rate: 0.5, Trials: 0},
	} {
		_, err := amplify.Run(o)
		assert.Error(t, err, "%+v", o)
	}
	_, err := amplify.Run(amplify.Options{Outer: 3, MaxRetries: 4, Fault: transport.LoseRequest, Rate: 0.5, Trials: 1})
	assert.EqualError(t, err, `amplify: Class is nil: to simulate, give the class whose Method the loop calls (the demo's: Class examples.NewInventory, Method "SetQuantity", Args ["apple", 1])`)
}

// Rule H2: trial seeds do not wrap past 2^64 (Seed+Trials-1 went round
// to 0), and Trials is bounded.
func TestH2_RunRefusesTrialSeedsPastUint64(t *testing.T) {
	o := amplify.Options{Outer: 1, MaxRetries: 4, Fault: transport.LoseResponse, Rate: 0.1, Trials: 3, Seed: math.MaxUint64,
		Class: examples.NewInventory, Method: "SetQuantity", Args: []any{"apple", 1}}
	_, err := amplify.Run(o)
	require.ErrorIs(t, err, stub.ErrRange)
	assert.ErrorContains(t, err, "amplify: seed 18446744073709551615 with 3 trials: out of range: the last trial's seed, Seed+Trials-1, overflows a uint64")
	o.Seed = math.MaxUint64 - 2
	_, err = amplify.Run(o)
	require.NoError(t, err)
	o.Trials = amplify.MaxTrials + 1
	_, err = amplify.Run(o)
	assert.ErrorIs(t, err, stub.ErrRange)
}

// limiter's Take (marked Retryable) charges the billing object it reaches
// through its binding BILLING: one call out per execution.
type limiter struct{ st *object.State }

func (l *limiter) Methods() object.Methods { return object.Methods{"Take": object.Retryable(l.Take)} }

func (l *limiter) Take(ctx context.Context) (int, error) {
	billing, err := runtime.Binding(l.st, "BILLING")
	if err != nil {
		return 0, err
	}
	s, err := billing.GetByName("acct")
	if err != nil {
		return 0, err
	}
	return stub.CallAs[int](ctx, s, "Charge")
}

type billing struct{ st *object.State }

func (b *billing) Methods() object.Methods { return object.Methods{"Charge": object.Func(b.Charge)} }

func (b *billing) Charge(ctx context.Context) (int, error) {
	n, _, err := object.GetAs[int](ctx, b.st.Storage(), "n")
	if err != nil {
		return 0, err
	}
	return n + 1, b.st.Storage().Put(ctx, "n", n+1)
}

// Rule S15 across a hop: a class that calls another object through its
// binding is amplified with that object defined in every trial
// (Options.Bindings); the object's calls out are counted apart from the
// loop's (CallsOut, ExecutionsOut), one per execution of the marked Take.
func TestS15_AmplifyCountsTheCallsOutApart(t *testing.T) {
	opts := amplify.Options{Outer: 2, MaxRetries: 2, Fault: transport.LoseResponse, Rate: 0.5, Trials: 200, Seed: 3,
		Class: func(st *object.State) object.Object { return &limiter{st: st} }, Method: "Take", Namespace: "LIMITER",
		Bindings: map[string]runtime.Constructor{"BILLING": func(st *object.State) object.Object { return &billing{st: st} }}}
	res, err := amplify.Run(opts)
	require.NoError(t, err)
	assert.Positive(t, res.CallsOut.Max)
	assert.LessOrEqual(t, res.Calls.Max, int64(2), "the loop's own calls: at most Outer")
	assert.Equal(t, res.Executions.Mean, res.CallsOut.Mean, "each execution of Take calls billing once")
	assert.LessOrEqual(t, res.ExecutionsOut.Mean, res.CallsOut.Mean, "a call out that never arrived ran nothing")
	again, err := amplify.Run(opts)
	require.NoError(t, err)
	assert.Equal(t, res.CallsOut, again.CallsOut, "seeded")

	opts.Bindings = nil
	without, err := amplify.Run(opts)
	require.NoError(t, err)
	assert.Equal(t, opts.Trials, without.Failed, "without its binding every Take fails")
	assert.Zero(t, without.CallsOut.Max)
	opts.Bindings = map[string]runtime.Constructor{"LIMITER": opts.Class}
	_, err = amplify.Run(opts)
	assert.ErrorContains(t, err, `binding "LIMITER": want a name other than the class's namespace and a class`)
}
