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

// Rules S6 and C6: every Cancel loses its first reply and runs again for
// the same request; each answers as one run would, because the tombstone
// remembers the answer, not only the fact. A booking id booked again after
// its cancel is cancelled again; an id never booked is false.
func TestS6_SeatsCancelAnswersTheSameOnARetry(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Cancel", Attempt: 1, Fault: transport.LoseResponse})
	for _, ctor := range []runtime.Constructor{examples.NewSeats, examples.NewSeatsLeaky} {
		rt := run(t, plan, ctor, func(ctx context.Context, s *stub.Stub, _ *runtime.Runtime) {
			seats := examples.NewSeatsStub(s) // SeatsLeaky has Seats's methods
			cancel := func(id string) bool {
				ok, err := seats.Cancel(ctx, id)
				require.NoError(t, err)
				return ok
			}
			_, err := seats.Book(ctx, "b-1", 3, "alice")
			require.NoError(t, err)
			assert.True(t, cancel("b-1"), "the retry of the cancel that deleted it")
			assert.True(t, cancel("b-1"), "cancelled before: the tombstone answers")
			assert.False(t, cancel("b-9"), "never booked")
			_, err = seats.Book(ctx, "b-1", 4, "bob")
			require.NoError(t, err)
			assert.True(t, cancel("b-1"), "booked again, cancelled again")
			holder, err := seats.Holder(ctx, 4)
			require.NoError(t, err)
			assert.Empty(t, holder, "seat 4 is free again")
		})
		for _, c := range rt.Calls() {
			if c.Method == "Cancel" {
				assert.Equal(t, 2, c.Executions(), "each Cancel ran twice for one request")
			}
		}
	}
}
