package explore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parcel keeps an order's status. With monotonic set, a status update
// that arrives after a later one is ignored (the fixed form); without, the
// last update to arrive wins (the planted bug: it assumes updates arrive
// in the order they were sent).
type parcel struct {
	st        *object.State
	monotonic bool
}

var statusRank = map[string]int{"paid": 1, "packed": 2, "shipped": 3}

func (p *parcel) Methods() object.Methods {
	return object.Methods{"Set": object.Func(p.Set), "Status": object.Retryable(p.Status)}
}

func (p *parcel) Set(ctx context.Context, status string) error {
	s := p.st.Storage()
	if p.monotonic {
		var cur string
		if _, err := s.Get(ctx, "status", &cur); err != nil {
			return err
		}
		if statusRank[cur] >= statusRank[status] {
			return nil
		}
	}
	return s.Put(ctx, "status", status)
}

func (p *parcel) Status(ctx context.Context) (string, error) {
	var cur string
	_, err := p.st.Storage().Get(ctx, "status", &cur)
	return cur, err
}

// parcelUpdates sends three status updates from three workers, each its
// own stub that does not retry, a millisecond apart, and checks that the
// parcel ends "shipped" when the last update succeeded. (Without retries
// no fault reorders the updates: one that fails is simply lost.)
func parcelUpdates(monotonic bool) func(context.Context, *runtime.Runtime) error {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("PARCEL", func(st *object.State) object.Object { return &parcel{st: st, monotonic: monotonic} })
		shipped := false
		g := rt.Group(ctx)
		for i, status := range []string{"paid", "packed", "shipped"} {
			g.Go(func(ctx context.Context) error {
				if err := rt.Sleep(ctx, time.Duration(i)*time.Millisecond); err != nil {
					return err
				}
				s, err := ns.GetByName("order-7", stub.MaxRetries(0))
				if err != nil {
					return err
				}
				if _, err := s.Call(ctx, "Set", status); err == nil && status == "shipped" {
					shipped = true
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		s, err := ns.GetByName("order-7", stub.MaxRetries(10))
		if err != nil {
			return err
		}
		got, err := stub.CallAs[string](ctx, s, "Status")
		if err == nil && shipped && got != "shipped" {
			return fmt.Errorf("the parcel ends %q, want shipped: an earlier update overtook a later one", got)
		}
		return nil
	}
}

// TestLatency_FindsAnOvertakenUpdate: the planted bug needs one worker's
// update to overtake a later one's; without latency no fault draw
// reorders them, so 10,000 seeds at the default rates are clean, and with
// the explorer's default latency a sweep finds it. The fixed form
// explores clean with latency and with swarm profiles (issue 23).
func TestLatency_FindsAnOvertakenUpdate(t *testing.T) {
	opts := explore.Options{Seeds: 10000, NoLatency: true, NoLinearizability: true}
	off, err := explore.RunFunc(opts, parcelUpdates(false))
	require.NoError(t, err)
	assert.True(t, off.Clean(), "without latency nothing reorders the updates: %v", off.Violations)
	assert.Equal(t, transport.Latency{}, off.Latency)

	on, err := explore.RunFunc(explore.Options{Seeds: 2000, NoLinearizability: true}, parcelUpdates(false))
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
