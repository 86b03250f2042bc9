package explore_test

import (
	"context"
	"testing"
	"time"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parcelUpdates is the zoo's overtaken-update bug (examples/zoo): three
// status updates from three workers, each its own stub that does not
// retry, a millisecond apart, and a check that the parcel ends "shipped"
// when the last update succeeded. Without monotonic (the planted bug) the
// last update to arrive wins; with it, an update that arrives after a
// later one is ignored. (Without retries no fault reorders the updates:
// one that fails is simply lost.)
func parcelUpdates(monotonic bool) zoo.Driver {
	return zooDriver(zoo.FoundByLatency, "overtaken-update", monotonic)
}

// TestLatency_FindsAnOvertakenUpdate: the planted bug needs one worker's
// update to overtake a later one's; without latency no fault draw
// reorders them, so 10,000 seeds at the default rates are clean, and with
// the explorer's default latency a sweep finds it. The fixed form
// explores clean with latency and with swarm profiles (issue 23).
func TestLatency_FindsAnOvertakenUpdate(t *testing.T) {
	opts := explore.Options{Seeds: countSeeds(10000), Strategy: runtime.StrategyRandom, NoLatency: true, NoLinearizability: true}
	off, err := explore.RunFunc(opts, parcelUpdates(false))
	require.NoError(t, err)
	assert.True(t, off.Clean(), "without latency nothing reorders the updates: %v", off.Violations)
	assert.Equal(t, transport.Latency{}, off.Latency)

	on, err := explore.RunFunc(explore.Options{Seeds: 2000, Strategy: runtime.StrategyRandom, NoLinearizability: true}, parcelUpdates(false))
	require.NoError(t, err)
	require.NotNil(t, on.FirstFailing, "latency must reorder the updates within 2,000 seeds")
	assert.Contains(t, on.FirstFailing.Violations[0].Message, "an earlier update overtook a later one")
	assert.Equal(t, explore.DefaultLatency, on.Latency)
	t.Logf("first failing seed %d, %d of 2000 seeds fail", on.FirstFailing.Seed, on.Failed)

	for _, swarm := range []bool{false, true} {
		fixed, err := explore.RunFunc(explore.Options{Seeds: 2000, Swarm: swarm, NoLinearizability: true}, parcelUpdates(true))
		require.NoError(t, err)
		assert.True(t, fixed.Clean(), "swarm %v: %v", swarm, fixed.Violations)
	}

	// Same seed, same run: latency is drawn from the seed.
	a, err := explore.RunFunc(explore.Options{Seeds: 300, NoLinearizability: true}, parcelUpdates(false))
	require.NoError(t, err)
	b, err := explore.RunFunc(explore.Options{Seeds: 300, NoLinearizability: true}, parcelUpdates(false))
	require.NoError(t, err)
	assert.Equal(t, a.Violations, b.Violations)
}

// ticket hands out numbers in the order its calls run: Next's answer is
// its place in the object's order of turns. Keep writes with
// AllowUnconfirmed (rule L7's planted bug) when fast is set.
type ticket struct {
	st   *object.State
	fast bool
}

func (k *ticket) Methods() object.Methods { return object.Methods{"Next": object.Func(k.Next)} }

func (k *ticket) Next(ctx context.Context) (int, error) {
	var n int
	if _, err := k.st.Storage().Get(ctx, "n", &n); err != nil {
		return 0, err
	}
	n++
	var opts []object.WriteOption
	if k.fast {
		opts = append(opts, object.AllowUnconfirmed())
	}
	return n, k.st.Storage().Put(ctx, "n", n, opts...)
}

// twoTickets runs two callers, each on a stub of its own, the second a
// millisecond after the first, and returns the tickets in the order their
// replies came back, with the runtime's trace.
func twoTickets(t *testing.T, seed uint64, plan *transport.FaultPlan) ([]int, string) {
	t.Helper()
	rt := runtime.New(runtime.WithSeed(seed), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("TICKET", func(st *object.State) object.Object { return &ticket{st: st} })
	var got []int
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		for i := range 2 {
			g.Go(func(ctx context.Context) error {
				if err := rt.Sleep(ctx, time.Duration(i)*time.Millisecond); err != nil {
					return err
				}
				s, err := ns.GetByName("desk")
				if err != nil {
					return err
				}
				n, err := stub.CallAs[int](ctx, s, "Next")
				if err == nil {
					got = append(got, n)
				}
				return nil
			})
		}
		return g.Wait()
	}))
	return got, rt.Trace()
}

// TestL1_RepliesOvertakeOneAnother: with latency, each reply travels back
// with a latency of its own (transport.FaultPlan.ReplyDelay), so the reply
// of the call the object ran first may reach its caller after the reply
// of a call it ran later (two stubs' calls, rule L1 orders neither).
// Without latency the object's order is the order of the replies. Same
// seed, same trace, replies' latencies included (D1).
func TestL1_RepliesOvertakeOneAnother(t *testing.T) {
	on := transport.Plan().WithLatency(explore.DefaultLatency)
	overtaken := 0
	for seed := range uint64(200) {
		got, _ := twoTickets(t, seed, transport.Plan())
		require.Equal(t, []int{1, 2}, got, "seed %d without latency: the replies come in the object's order", seed)
		got, trace := twoTickets(t, seed, on)
		require.Len(t, got, 2)
		if got[0] == 2 {
			overtaken++
		}
		_, again := twoTickets(t, seed, on)
		require.Equal(t, trace, again, "seed %d: same seed, same trace", seed)
	}
	assert.Greater(t, overtaken, 10, "the later call's reply comes first on some seeds")
	assert.Less(t, overtaken, 150, "and not on most")
	t.Logf("%d of 200 seeds: the reply of the call run second came first", overtaken)
}

// TestL3L7_AReplyOnItsWayIsNotTakenBack: a reply that the output gate let
// go (AllowUnconfirmed) is on its way when the write then fails and the
// object resets: the caller still gets it, after the reply's latency, and
// the attempt's record ends when the caller learned (rules L7, L3, D2).
// The write is lost.
func TestL3L7_AReplyOnItsWayIsNotTakenBack(t *testing.T) {
	lat := transport.Latency{P50: 40 * time.Millisecond, P99: 80 * time.Millisecond}
	plan := transport.Plan(transport.Rule{Method: "Next", Fault: transport.StorageWriteFails}).WithLatency(lat)
	for seed := range uint64(20) {
		rt := runtime.New(runtime.WithSeed(seed), runtime.WithFaults(plan))
		ns := rt.Namespace("TICKET", func(st *object.State) object.Object { return &ticket{st: st, fast: true} })
		var got int
		var callErr error
		require.NoError(t, rt.Run(func(ctx context.Context) error {
			s, err := ns.GetByName("desk", stub.MaxRetries(0))
			if err != nil {
				return err
			}
			got, callErr = stub.CallAs[int](ctx, s, "Next")
			return nil
		}))
		require.NoError(t, callErr, "seed %d: the reply went before the write failed", seed)
		assert.Equal(t, 1, got)
		id := ns.IDFromName("desk")
		assert.Equal(t, 1, ns.Resets(id), "the failed write reset the object")
		assert.Empty(t, ns.Storage(id).Snapshot(), "the write is lost")
		a := transport.Attempt{Seed: seed, Call: 1, N: 1, Namespace: "TICKET", Object: "desk", Method: "Next"}
		out, back := plan.DecideAttempt(a).Delay, plan.ReplyDelay(a)
		require.Positive(t, back)
		c := rt.Calls()[0]
		assert.Equal(t, transport.OutcomeOK, c.Outcome)
		assert.Equal(t, 1, c.Attempts[0].LostWrites)
		assert.Equal(t, out+back, c.End, "seed %d: the call ends when its reply arrives", seed)
		assert.Equal(t, out+back, c.Attempts[0].End, "seed %d: and so does its attempt", seed)
		rt.Close()
	}
}

// slowAdder is adder, with a wait before it adds.
type slowAdder struct{ adder }

func (a *slowAdder) Methods() object.Methods { return object.Methods{"Add": object.Func(a.Add)} }

func (a *slowAdder) Add(ctx context.Context, n int) (int, error) {
	if err := a.st.Sleep(ctx, 10*time.Millisecond); err != nil {
		return 0, err
	}
	return a.adder.Add(ctx, n)
}

// TestC2_ACutTurnsCallsOutAreMade: a turn cut short by a reset after its
// call out (the relay is reset while it waits for the bank's answer, so
// its write after it is refused, L4) may or may not have taken effect,
// but the call out it made was made either way: the check counts it among
// the object's effects in both branches, and the history is clean, not a
// violation. (Reply latency made this common: the relay waits longer for
// the answer; issue 23.)
func TestC2_ACutTurnsCallsOutAreMade(t *testing.T) {
	opts := explore.Options{Seeds: 50, Strategy: runtime.StrategyRandom, NoLatency: true, Rates: transport.Rates{transport.Overloaded: 1e-9}}
	sum, err := explore.RunFunc(opts, func(ctx context.Context, rt *runtime.Runtime) error {
		bank := rt.Namespace("ADDER", func(st *object.State) object.Object { return &slowAdder{adder{st: st}} })
		relays := rt.Namespace("RELAY", func(st *object.State) object.Object { return &relay{st: st, bank: bank} })
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error {
			s, err := relays.GetByName("r")
			if err != nil {
				return err
			}
			_, _ = s.Call(ctx, "Forward", "tx-1", 5)
			return nil
		})
		g.Go(func(ctx context.Context) error {
			if err := rt.Sleep(ctx, 5*time.Millisecond); err != nil {
				return err
			}
			return relays.Reset(relays.IDFromName("r"), transport.ResetCodeUpdate)
		})
		return g.Wait()
	})
	require.NoError(t, err)
	assert.True(t, sum.Clean(), "violations: %v", sum.Violations)
	assert.Empty(t, sum.Unchecked, "every history is checked")
	assert.Equal(t, 100, sum.Histories, "the relay's and the bank's")
}
