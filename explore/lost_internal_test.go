package explore

import (
	"testing"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// L7: the invariant "a caller never saw success for a write that was
// lost" fires on a call that ended ok whose attempt lost a write (the
// AllowUnconfirmed bug), and stays silent on the fixed form, where the
// write failure reached the caller as the reset error.
func TestL7_InvariantCallerNeverSawSuccessForLostWrite(t *testing.T) {
	rec := func(outcome transport.Outcome, lost int) runtime.CallRecord {
		return runtime.CallRecord{RequestID: "r", Namespace: "C", Object: "c", Method: "Put", Subrequests: 1,
			Outcome: outcome, Attempts: []runtime.AttemptRecord{{N: 1, RequestID: "r", LostWrites: lost}}}
	}
	v := recordInvariants(1, rec(transport.OutcomeOK, 1), false, 3, time.Minute)
	require.Len(t, v, 1)
	assert.Equal(t, "L7", v[0].Rule)
	assert.Contains(t, v[0].Message, "saw success (ok) for 1 write that was lost")
	assert.Empty(t, recordInvariants(1, rec(transport.OutcomeNotRetryable, 1), false, 3, time.Minute), "the caller got the reset error")
	assert.Empty(t, recordInvariants(1, rec(transport.OutcomeOK, 0), false, 3, time.Minute), "nothing lost")
}
