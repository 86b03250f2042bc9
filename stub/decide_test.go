package stub

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/transport"
)

// TestRetryDecisionRules reads like the retry rules: each case is one
// rule's situation after an attempt, and what decide makes of it: retry
// (after a backoff drawn from the seed), or end the call with an outcome
// and the error the caller gets.
func TestRetryDecisionRules(t *testing.T) {
	const deadline = 10 * time.Second
	// failed is a failure of attempt n that every rule lets retry.
	failed := func(n int) ended {
		return ended{n: n, kind: wire.FailLink, retryable: true, replayable: true, maxRetries: 4, now: time.Second, deadline: deadline}
	}
	with := func(e ended, edit func(*ended)) ended { edit(&e); return e }
	retry := verdict{retry: true}
	end := func(o transport.Outcome, b blame) verdict { return verdict{outcome: o, blame: b} }

	tests := []struct {
		name string
		in   ended
		want verdict // sleep is checked apart: drawn when want.retry
		// draws: the backoff is drawn from the seed (S8): only when the
		// other rules let the retry go.
		draws bool
	}{
		{"S3 a retryable failure of a replayable call is retried", failed(1), retry, true},
		{"S3 a retryable failure is retried up to MaxRetries times", failed(4), retry, true},
		{"S4 the first attempt succeeds: ok", with(failed(1), func(e *ended) { e.kind, e.retryable = wire.FailNone, false }),
			end(transport.OutcomeOK, blameNone), false},
		{"S4 a retry succeeds: recovered", with(failed(3), func(e *ended) { e.kind, e.retryable = wire.FailNone, false }),
			end(transport.OutcomeRecovered, blameNone), false},
		{"S4 an object error is never retried", with(failed(1), func(e *ended) { e.kind, e.retryable = wire.FailRemote, false }),
			end(transport.OutcomeNotRetryable, blameLast), false},
		{"S4 an object error flagged retryable (a *Error it passed on) is never retried", with(failed(1), func(e *ended) { e.kind = wire.FailRemote }),
			end(transport.OutcomeNotRetryable, blameLast), false},
		{"S4 an overloaded refusal or a reset after delivery is never retried", with(failed(1), func(e *ended) { e.retryable = false }),
			end(transport.OutcomeNotRetryable, blameLast), false},
		{"S6 a retry refused as a duplicate ends the call with its first error", with(failed(2), func(e *ended) { e.kind, e.retryable = wire.FailRejected, false }),
			end(transport.OutcomeDuplicateRejected, blameFirst), false},
		{"S9 no retry whose backoff would end at or after the deadline", with(failed(1), func(e *ended) { e.now = deadline }),
			end(transport.OutcomeTimeout, blameFirst), true},
		{"S9 a retry still waiting at the deadline is cancelled: the first error", with(failed(2), func(e *ended) { e.stopped, e.kind = true, wire.FailNone }),
			end(transport.OutcomeTimeout, blameFirst), false},
		{"S10 the first error wins when the attempts run out", failed(5),
			end(transport.OutcomeAttemptsExhausted, blameFirst), false},
		{"S10 a later failure that is never retried wins over the first", with(failed(3), func(e *ended) { e.kind, e.retryable = wire.FailRemote, false }),
			end(transport.OutcomeNotRetryable, blameLast), false},
		{"S2 MaxRetries 0 makes one attempt", with(failed(1), func(e *ended) { e.maxRetries = 0 }),
			end(transport.OutcomeAttemptsExhausted, blameFirst), false},
		{"S11 a call that cannot be sent again is not retried", with(failed(1), func(e *ended) { e.replayable = false }),
			end(transport.OutcomeNotReplayable, blameFirst), false},
		{"S12 a call pipelined on stops retrying", with(failed(1), func(e *ended) { e.pipelined = true }),
			end(transport.OutcomeNotReplayable, blameFirst), false},
		{"S14 no retry starts after the caller's context is cancelled", with(failed(1), func(e *ended) { e.cancelled = true }),
			end(transport.OutcomeCancelled, blameCancelled), false},
		{"S14 a retry the caller stopped waiting for: cancelled", with(failed(2), func(e *ended) { e.stopped, e.cancelled, e.kind = true, true, wire.FailNone }),
			end(transport.OutcomeCancelled, blameCancelled), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			got := decide(tc.in, rng)
			if got.retry != tc.want.retry || got.outcome != tc.want.outcome || got.blame != tc.want.blame {
				t.Fatalf("decide = retry %t, outcome %q, blame %d; want retry %t, outcome %q, blame %d",
					got.retry, got.outcome, got.blame, tc.want.retry, tc.want.outcome, tc.want.blame)
			}
			if limit := min(500*time.Millisecond<<(tc.in.n-1), 2*time.Second); got.retry && (got.sleep < 0 || got.sleep > limit) {
				t.Errorf("S8: backoff before retry %d is %v, want within [0, %v]", tc.in.n, got.sleep, limit)
			}
			if !got.retry && got.sleep != 0 {
				t.Errorf("a call that ends sleeps %v, want 0", got.sleep)
			}
			fresh := rand.New(rand.NewPCG(7, 8))
			if drew := rng.Uint64() != fresh.Uint64(); drew != tc.draws {
				t.Errorf("S8: backoff drawn from the seed: %t, want %t", drew, tc.draws)
			}
		})
	}
}
