package zoo_test

import (
	"fmt"

	"github.com/dosim/dosim/examples/zoo"
)

// The zoo's bugs, by name and kind, in the order of the package's table:
// the thirteen shallow ones, then the six deep ones.
func ExampleBugs() {
	for _, b := range zoo.Bugs() {
		fmt.Printf("%s: %s\n", b.Name, b.Kind)
	}
	// Output:
	// lost-update: a lost update across an await
	// check-then-act: a check-then-act across an outgoing call
	// marked-without-key: a marked (Retryable) method without a key
	// fact-not-answer: a key that stores the fact, not the answer
	// retry-amplified-effect: a retry-amplified external effect
	// overtaken-retry: a retry overtaken by a later call of the same caller
	// alarm-forever: an alarm that re-arms forever
	// poisoned-queue: a poisoned queue item that blocks the items behind it
	// schedule-on-restart: a schedule that duplicates itself on restart
	// unconfirmed-reply: an output-gate AllowUnconfirmed reply
	// reset-mid-transfer: a reset mid-transfer without a key
	// two-faults: a bug that needs two faults at once
	// crash-window: a key written after its effect: a crash between them charges twice
	// overtaken-update: an earlier update that overtakes a later one (three callers, no retries)
	// fallback-charge: a fallback that charges again under a new key when a call gives up
	// starved-caller: a first-come, first-served turnstile that starves a caller
	// deposed-leader: a record of three terms that loses the first when a leader is deposed three times
	// batch-resent: a batch resent whole when each of its three sends failed
	// fallback-ladder: an outbox at the end of a fallback ladder that charges again under its own key
}
