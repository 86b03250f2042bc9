// Package zoo is a bug zoo: twenty-three planted bugs of different kinds,
// each beside its fixed form, as Go drivers (explore.Func) over small
// classes. Seventeen are shallow (four of them over WebSockets): random
// fault draws alone (the random
// tie-break, fixed rates, no latency) find each within a few hundred
// seeds. Six are deep: random fault draws alone miss each within 10,000
// seeds, and one strategy finds it (Bug.FoundBy): link latency, swarm
// profiles, PCT scheduling, bounded exhaustive search, or a
// coverage-guided fuzzer.
//
// The explorer's tests run every fixed form under every search strategy
// (it must explore clean), check each deep bug against random fault draws
// alone and against its own strategy, and BenchmarkTimeToFind measures
// how many seeds (or runs) and how much CPU time each strategy takes to
// find each bug (docs/explore.md, "Finding bugs", shows the table).
//
// Each bug's driver checks the symptom a developer would (a balance, a
// count of emails, a seat sold twice) and returns an error when it sees
// it; the explorer's own checks (the S invariants, linearizability, the
// liveness checks of rule C8) run beside it.
//
//	bug                     kind                                                  found by    where else
//	lost-update             a lost update across an await                         random      -
//	check-then-act          a check-then-act across an outgoing call              random      -
//	marked-without-key      a marked (Retryable) method without a key             random      -
//	fact-not-answer         a key that stores the fact, not the answer            random      -
//	retry-amplified-effect  a retry-amplified external effect                     random      examples.Mailer, mailer-vs-ledger.yaml
//	overtaken-retry         a retry overtaken by a later call of the same caller  random      overtaken-update (three callers)
//	alarm-forever           an alarm that re-arms forever                         random      examples.Chores, testdata/liveness
//	poisoned-queue          a poisoned queue item that blocks the items behind it random      examples.Chores, testdata/liveness
//	schedule-on-restart     a schedule that duplicates itself on restart          random      -
//	unconfirmed-reply       an output-gate AllowUnconfirmed reply                 random      examples.Tally, output-gate-unconfirmed.yaml
//	reset-mid-transfer      a reset mid-transfer without a key                    random      reset-retry-without-key.yaml
//	two-faults              a bug that needs two faults at once                   random      -
//	crash-window            a key written after its effect (a crash between them) random      -
//	orphan-presence         an orphan left by a lost upgrade reply                random      examples.Chat
//	broadcast-after-wake    a broadcast list in a field, emptied by hibernation   random      examples.Chat
//	field-lost-on-wake      state kept in a field, lost when the object wakes     random      examples.Chat, examples.Session
//	resent-message          a message handler not idempotent across a resend      random      marked-without-key
//	overtaken-update        an earlier update that overtakes a later one          latency     explore/latency_test.go
//	fallback-charge         a fallback that charges again when a call gives up    swarm       explore/swarm_test.go
//	starved-caller          a first-come, first-served turnstile that starves     pct         explore/pct_test.go
//	deposed-leader          a record of three terms, a leader deposed three times pct (depth 4) -
//	batch-resent            a batch resent whole when its three sends failed      exhaustive  -
//	fallback-ladder         an outbox at the end of a fallback ladder             fuzz        explore FuzzFallbackLadder
//
// Bugs returns them in this order; Bug.Needs says what a run must draw to
// show each (a fault, two, or a timing), Bug.FoundBy the simplest strategy
// that finds it, Bug.Elsewhere where the same bug also lives in the
// repository.
package zoo
