package transport_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaultNamesRoundTrip(t *testing.T) {
	for _, f := range append([]transport.Fault{transport.None}, transport.Faults()...) {
		got, err := transport.ParseFault(f.String())
		require.NoError(t, err)
		assert.Equal(t, f, got)
		b, _ := f.MarshalText()
		var back transport.Fault
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, f, back)
	}
	_, err := transport.ParseFault("lose-reply")
	require.ErrorIs(t, err, transport.ErrUnknownFault)
	assert.Contains(t, err.Error(), `unknown fault "lose-reply": allowed are none, not-delivered, lose-request`)
}

// The fault table of the design: where the link fails decides whether the
// request reached the object, whether the caller can tell, whether the
// failure is retryable (rules S3, S4), and what the caller reads.
func TestFaultTable(t *testing.T) {
	tests := []struct {
		f                             transport.Fault
		stage                         transport.Stage
		reaches, ambiguous, retryable bool
		resets                        bool
		message                       string
	}{
		{transport.None, transport.Nowhere, true, false, false, false, "failed (none)"},
		{transport.NotDelivered, transport.BeforeObject, false, false, true, false, "not delivered (not-delivered): the object was restarting or moving; the request never reached it"},
		{transport.LoseRequest, transport.BeforeObject, false, true, true, false, "connection lost (lose-request): the caller cannot tell whether the request reached the object (it did not)"},
		{transport.LoseWhileRunning, transport.WhileRunning, true, true, true, false, "connection lost while the method ran (lose-while-running): the caller cannot tell whether it ran (it runs to its end)"},
		{transport.LoseResponse, transport.AtReply, true, true, true, false, "reply lost (lose-response): the caller cannot tell whether the method ran (it did)"},
		{transport.Overloaded, transport.BeforeObject, false, false, false, false, "Durable Object is overloaded. Too many requests queued."},
		{transport.FailAfterDelivery, transport.AtReply, true, false, false, true, "object reset after delivery (fail-after-delivery): its in-memory state was lost"},
		{transport.Reset, transport.WhileRunning, true, false, false, true, "object reset (reset): Durable Object reset because its code was updated."},
		{transport.StorageWriteFails, transport.Nowhere, true, false, false, true, "storage write failed (storage-write-fails): Internal error in Durable Object storage caused object to be reset"},
		{transport.DropConnection, transport.OnConnection, true, true, false, false, "connection dropped (drop-connection): the WebSocket closed with 1006; what was on its wire either way is lost"},
	}
	require.Len(t, tests, len(transport.Faults())+1, "every fault has a row")
	for _, tc := range tests {
		assert.Equal(t, tc.stage, tc.f.Stage(), "%v stage", tc.f)
		assert.Equal(t, tc.reaches, tc.f.Reaches(), "%v reaches", tc.f)
		assert.Equal(t, tc.ambiguous, tc.f.Ambiguous(), "%v ambiguous", tc.f)
		assert.Equal(t, tc.retryable, tc.f.Retryable(), "%v retryable", tc.f)
		assert.Equal(t, tc.resets, tc.f.Resets(), "%v resets", tc.f)
		assert.Equal(t, tc.message, tc.f.Message(), "%v message", tc.f)
	}
	assert.Equal(t, "failed (fault(10))", transport.Fault(10).Message())
	assert.Equal(t, transport.Nowhere, transport.Fault(10).Stage(), "a fault outside the table is no fault")
}

// What a record says the link did to an attempt (rule D2).
func TestFaultLinkText(t *testing.T) {
	tests := []struct {
		f                    transport.Fault
		delivered, cancelled bool
		want                 string
	}{
		{transport.None, true, false, "delivered"},
		{transport.None, true, true, "delivered, cancelled"},
		{transport.None, false, false, "in flight"},
		{transport.None, false, true, "cancelled in flight"},
		{transport.LoseResponse, true, false, "lose-response"},
		{transport.LoseWhileRunning, true, true, "lose-while-running, cancelled"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.f.LinkText(tc.delivered, tc.cancelled), "%v delivered=%t cancelled=%t", tc.f, tc.delivered, tc.cancelled)
	}
}

// Outcomes are one typed list (rule D2) that reads and writes the names
// records, JSON and scenarios use; a call still in flight reads "".
func TestOutcomeNamesRoundTrip(t *testing.T) {
	var names []string
	for _, o := range transport.Outcomes() {
		names = append(names, o.String())
		got, err := transport.ParseOutcome(o.String())
		require.NoError(t, err)
		assert.Equal(t, o, got)
		b, err := o.MarshalText()
		require.NoError(t, err)
		var back transport.Outcome
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, o, back)
	}
	assert.Equal(t, []string{"ok", "recovered", "duplicate-rejected", "attempts-exhausted", "timeout", "not-retryable", "not-replayable", "cancelled", "broken-stub"}, names)

	assert.Equal(t, "", transport.OutcomePending.String())
	b, err := json.Marshal(struct{ O transport.Outcome }{transport.OutcomePending})
	require.NoError(t, err)
	assert.Equal(t, `{"O":""}`, string(b))
	var back struct{ O transport.Outcome }
	require.NoError(t, json.Unmarshal([]byte(`{"O":"not-replayable"}`), &back))
	assert.Equal(t, transport.OutcomeNotReplayable, back.O)

	_, err = transport.ParseOutcome("")
	require.ErrorIs(t, err, transport.ErrUnknownOutcome)
	_, err = transport.ParseOutcome("exhausted")
	require.ErrorIs(t, err, transport.ErrUnknownOutcome)
	assert.Contains(t, err.Error(), `unknown outcome "exhausted": allowed are ok, recovered, duplicate-rejected`)
	_, err = transport.Outcome(200).MarshalText()
	require.ErrorIs(t, err, transport.ErrUnknownOutcome)
}

func TestFirstMatchingRuleWins(t *testing.T) {
	plan := transport.Plan(
		transport.Rule{Namespace: "A", Method: "Get", Attempt: 2, Fault: transport.LoseRequest},
		transport.Rule{Object: "apple", Fault: transport.Overloaded, Delay: time.Second},
		transport.Rule{Method: "Get", Delay: 3 * time.Second},
	)
	decide := func(a transport.Attempt) (transport.Fault, time.Duration) { return plan.Decide(a) }
	f, d := decide(transport.Attempt{Namespace: "A", Object: "x", Method: "Get", N: 2})
	assert.Equal(t, transport.LoseRequest, f)
	assert.Zero(t, d)
	f, d = decide(transport.Attempt{Namespace: "A", Object: "apple", Method: "Get", N: 1})
	assert.Equal(t, transport.Overloaded, f)
	assert.Equal(t, time.Second, d)
	f, _ = decide(transport.Attempt{Namespace: "B", Object: "x", ObjectID: "apple", Method: "Put", N: 1})
	assert.Equal(t, transport.Overloaded, f, "Object matches the hex id too")
	f, d = decide(transport.Attempt{Namespace: "B", Object: "x", Method: "Get", N: 1})
	assert.Equal(t, transport.None, f)
	assert.Equal(t, 3*time.Second, d)
	var none *transport.FaultPlan
	f, d = none.Decide(transport.Attempt{Method: "Get"})
	assert.Equal(t, transport.None, f, "a nil plan injects nothing")
	assert.Zero(t, d)
}

// Rules that name a call are looked up by call, not scanned: the first
// matching rule still wins, whether it names a call or not, also after
// WithRandom.
func TestFirstMatchingRuleWinsWithCallRules(t *testing.T) {
	base := transport.Plan(
		transport.Rule{Call: 2, Method: "Get", Fault: transport.LoseRequest},
		transport.Rule{Method: "Get", Attempt: 2, Fault: transport.Overloaded},
		transport.Rule{Call: 2, Attempt: 2, Fault: transport.LoseResponse},
		transport.Rule{Call: 3, Fault: transport.NotDelivered},
		transport.Rule{Fault: transport.FailAfterDelivery},
	)
	for _, plan := range []*transport.FaultPlan{base, base.WithRandom(transport.Rates{transport.LoseRequest: 0})} {
		tests := []struct {
			a    transport.Attempt
			want transport.Fault
		}{
			{transport.Attempt{Call: 2, Method: "Get", N: 2}, transport.LoseRequest},
			{transport.Attempt{Call: 2, Method: "Put", N: 2}, transport.LoseResponse},
			{transport.Attempt{Call: 3, Method: "Get", N: 2}, transport.Overloaded},
			{transport.Attempt{Call: 3, Method: "Get", N: 1}, transport.NotDelivered},
			{transport.Attempt{Call: 4, Method: "Get", N: 2}, transport.Overloaded},
			{transport.Attempt{Call: 2, Method: "Put", N: 1}, transport.FailAfterDelivery},
		}
		for _, tc := range tests {
			f, _ := plan.Decide(tc.a)
			assert.Equal(t, tc.want, f, "%+v", tc.a)
		}
	}
}

func TestRandomRatesComposeWithRules(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Slow", Delay: time.Second}).
		WithRandom(transport.Rates{transport.LoseRequest: 0.25, transport.LoseResponse: 0.25})
	require.NoError(t, plan.Validate())
	counts := map[transport.Fault]int{}
	const n = 20000
	for i := range n {
		f, d := plan.Decide(transport.Attempt{Method: "Slow", Seed: 9, Call: i/3 + 1, N: i%3 + 1})
		assert.Equal(t, time.Second, d, "the rule's delay applies with a random fault")
		counts[f]++
	}
	for _, f := range []transport.Fault{transport.LoseRequest, transport.LoseResponse, transport.None} {
		want := map[transport.Fault]float64{transport.None: 0.5}[f]
		if want == 0 {
			want = 0.25
		}
		assert.InDelta(t, want, float64(counts[f])/n, 0.02, "%v", f)
	}
	// A rule naming a fault takes precedence over random draws.
	fixed := transport.Plan(transport.Rule{Fault: transport.Overloaded}).WithRandom(transport.Rates{transport.LoseRequest: 1})
	f, _ := fixed.Decide(transport.Attempt{})
	assert.Equal(t, transport.Overloaded, f)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		plan *transport.FaultPlan
		want string
	}{
		{transport.Plan(transport.Rule{Attempt: -1}), "rule 1: Attempt is -1, must be >= 0"},
		{transport.Plan(transport.Rule{}, transport.Rule{Attempt: 12}), "rule 2: Attempt is 12, at most 11 attempts"},
		{transport.Plan(transport.Rule{Delay: -time.Second}), "rule 1: Delay is -1s, must be >= 0"},
		{transport.Plan(transport.Rule{Fault: transport.Fault(99)}), "rule 1: Fault is fault(99)"},
		{transport.Random(transport.Rates{transport.LoseRequest: 1.5}), "random rate for lose-request is 1.5, must be between 0 and 1"},
		{transport.Random(transport.Rates{transport.LoseRequest: -0.1}), "must be between 0 and 1"},
		{transport.Random(transport.Rates{transport.LoseRequest: 0.6, transport.Overloaded: 0.6}), "random rates add up to 1.2, must be at most 1"},
		{transport.Random(transport.Rates{transport.None: 0.1}), "random rate for none: not a fault"},
	}
	for _, tc := range tests {
		err := tc.plan.Validate()
		require.ErrorIs(t, err, transport.ErrInvalid)
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.NoError(t, (*transport.FaultPlan)(nil).Validate())
}

// C5: a random fault is a function of the seed, the call and the attempt
// alone: the same three always draw the same, and the draws are uniform.
func TestC5_RandomFaultsAreAHashOfSeedCallAndAttempt(t *testing.T) {
	plan := transport.Random(transport.Rates{transport.LoseResponse: 0.3})
	a := transport.Attempt{Seed: 7, Call: 3, N: 2}
	first, _ := plan.Decide(a)
	for range 5 {
		again, _ := plan.Decide(a)
		assert.Equal(t, first, again)
	}
	assert.Equal(t, transport.Draw(7, 3, 2), transport.Draw(7, 3, 2))
	assert.NotEqual(t, transport.Draw(7, 3, 2), transport.Draw(7, 3, 3))
	assert.NotEqual(t, transport.Draw(7, 3, 2), transport.Draw(8, 3, 2))
	assert.NotEqual(t, transport.Draw(7, 3, 2), transport.Draw(7, 4, 2))
	hits := 0
	const n = 30000
	for i := range n {
		u := transport.Draw(1, i+1, 1)
		require.True(t, u >= 0 && u < 1)
		if u < 0.3 {
			hits++
		}
	}
	assert.InDelta(t, 0.3, float64(hits)/n, 0.01)
}
