package stub_test

import (
	"context"
	"testing"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// identityFault is what rule S5 asks of the identities of c's attempts,
// "" when they keep it: a retry takes a new identity exactly when the
// attempt before it, and every one before that, is known not to have
// reached the object (not delivered and not lost on the way); the call's
// identity is its last attempt's. It names the first attempt that breaks
// the rule.
func identityFault(c runtime.CallRecord) string {
	unreached := true // every attempt so far is known not to have reached the object
	for i, a := range c.Attempts {
		if i > 0 {
			prev := c.Attempts[i-1]
			if changed := a.RequestID != prev.RequestID; changed != unreached {
				if changed {
					return "attempt " + a.RequestID + " took a new identity after an attempt that may have reached the object"
				}
				return "attempt " + a.RequestID + " kept the identity of attempts known not to have reached the object"
			}
		}
		// Known not to have reached it: not delivered, and not lost on the
		// way (a fault that would strike at the object, not delivered, is
		// one the object never got to: it was reset with the request queued).
		unreached = unreached && !a.Delivered && !a.Cancelled && (a.Fault.Reaches() || !a.Fault.Ambiguous())
	}
	if n := len(c.Attempts); n > 0 && c.Attempts[n-1].RequestID != c.RequestID {
		return "the call's identity is not its last attempt's"
	}
	return ""
}

// S5: after a failure known not to have reached the object (not
// delivered), the retry carries a new request identity; records show
// each attempt's, and the call's is its last attempt's. Source: workerd's
// src/workerd/api/actor-call-retry-test.c++, "not-delivered actor calls
// retry with a new token".
func TestS5_NotDeliveredRetryTakesANewIdentity(t *testing.T) {
	w := newWorld(t, 11, transport.Rule{Method: "Add", Attempt: 1, Fault: transport.NotDelivered})
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, err := s.Call(ctx, "Add")
		return err
	}))
	c := w.rt.Calls()[0]
	require.Len(t, c.Attempts, 2)
	assert.NotEqual(t, c.Attempts[0].RequestID, c.Attempts[1].RequestID, "the retry carries a new identity")
	assert.Equal(t, c.RequestID, c.Attempts[1].RequestID, "the call's identity is its last attempt's")
	assert.Equal(t, transport.OutcomeRecovered, c.Outcome)
	assert.Empty(t, identityFault(c))
	assert.Contains(t, w.rt.Trace(), "request="+c.Attempts[0].RequestID, "the trace shows the first attempt's identity")
}

// S5: once an attempt failed ambiguously (it may have reached the object),
// every later attempt keeps its identity for good, a later not-delivered
// failure notwithstanding: not-delivered, ambiguous, not-delivered give
// identities A, B, B, and the fourth attempt carries B too, so that the
// object refuses it as the duplicate it is (S6). Source: workerd's
// src/workerd/api/actor-call-retry-test.c++, "ambiguous actor calls retry
// with the same token" and "claim rejection returns the original
// ambiguous actor call failure" (the third attempt keeps the nonce).
func TestS5_AmbiguousAttemptKeepsItsIdentityForGood(t *testing.T) {
	w := newWorld(t, 11,
		transport.Rule{Method: "Add", Attempt: 1, Fault: transport.NotDelivered},
		transport.Rule{Method: "Add", Attempt: 2, Fault: transport.LoseResponse},
		transport.Rule{Method: "Add", Attempt: 3, Fault: transport.NotDelivered},
	)
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		_, _ = s.Call(ctx, "Add")
		return nil
	}))
	c := w.rt.Calls()[0]
	require.Len(t, c.Attempts, 4)
	a, b := c.Attempts[0].RequestID, c.Attempts[1].RequestID
	assert.NotEqual(t, a, b, "after not-delivered: a new identity")
	for _, at := range c.Attempts[2:] {
		assert.Equal(t, b, at.RequestID, "attempt %d keeps the ambiguous attempt's identity", at.N)
	}
	assert.Equal(t, b, c.RequestID)
	assert.True(t, c.Attempts[3].Rejected, "the object knows the identity: a duplicate (S6)")
	assert.Equal(t, transport.OutcomeDuplicateRejected, c.Outcome)
	assert.Equal(t, 1, c.Executions(), "an unmarked method ran once")
	assert.Empty(t, identityFault(c))
}
