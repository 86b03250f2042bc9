package render_test

import (
	"encoding/json"
	"testing"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S5: the JSON records carry each attempt's request identity where it is
// not its call's (an attempt known not to have reached the object, after
// which the retry took a new identity, as workerd's
// src/workerd/api/actor-call-retry-test.c++ "not-delivered actor calls
// retry with a new token"), and nothing more where every attempt carried
// the call's.
func TestS5_JSONAttemptsCarryTheirIdentityWhereItChanged(t *testing.T) {
	rep := render.Report{Name: "s5", Calls: []runtime.CallRecord{{
		RequestID: "b", Namespace: "N", Object: "o", Method: "M", Outcome: transport.OutcomeRecovered,
		Attempts: []runtime.AttemptRecord{
			{N: 1, RequestID: "a", Fault: transport.NotDelivered},
			{N: 2, RequestID: "b", Delivered: true, Executed: true},
		},
	}}}
	b, err := json.Marshal(render.ToJSON(rep))
	require.NoError(t, err)
	var got struct {
		Calls []struct {
			RequestID string `json:"requestId"`
			Attempts  []map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(b, &got))
	require.Len(t, got.Calls, 1)
	assert.Equal(t, "b", got.Calls[0].RequestID)
	assert.Equal(t, "a", got.Calls[0].Attempts[0]["requestId"], "the not-delivered attempt's own identity")
	assert.NotContains(t, got.Calls[0].Attempts[1], "requestId", "the call's identity is not repeated")
}
