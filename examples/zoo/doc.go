// Package zoo is a bug zoo: twelve planted bugs of different kinds, each
// beside its fixed form, as Go drivers (explore.Func) over small classes.
// The explorer's tests run every fixed form under every search strategy
// (it must explore clean) and BenchmarkTimeToFind measures how many seeds
// and how much CPU time each strategy takes to find each bug (the README,
// "Finding bugs", shows the table).
//
// Each bug's driver checks the symptom a developer would (a balance, a
// count of emails, a seat sold twice) and returns an error when it sees
// it; the explorer's own checks (the S invariants, linearizability, the
// liveness checks of rule C8) run beside it.
//
//	bug                     kind                                                  where else
//	lost-update             a lost update across an await                         -
//	check-then-act          a check-then-act across an outgoing call              -
//	marked-without-key      a marked (Retryable) method without a key             -
//	fact-not-answer         a key that stores the fact, not the answer            -
//	retry-amplified-effect  a retry-amplified external effect                     examples.Mailer, mailer-vs-ledger.yaml
//	overtaken-retry         a retry overtaken by a later call of the same caller  explore/latency_test.go (three callers)
//	alarm-forever           an alarm that re-arms forever                         examples.Chores, testdata/liveness
//	poisoned-queue          a poisoned queue item that blocks the items behind it examples.Chores, testdata/liveness
//	schedule-on-restart     a schedule that duplicates itself on restart          -
//	unconfirmed-reply       an output-gate AllowUnconfirmed reply                 examples.Tally, output-gate-unconfirmed.yaml
//	reset-mid-transfer      a reset mid-transfer without a key                    reset-retry-without-key.yaml
//	two-faults              a bug that needs two faults at once                   -
//
// Bugs returns them in this order; Bug.Needs says what a run must draw to
// show each (a fault, two, or a timing), Bug.Elsewhere where the same bug
// also lives in the repository.
package zoo
