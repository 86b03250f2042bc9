package zoo_test

import (
	"fmt"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
)

// The zoo's bugs, by name and kind, in the order of the package's table:
// the seventeen shallow ones (the last four over WebSockets), then the six
// deep ones.
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
	// orphan-presence: an orphan left by a lost upgrade reply
	// broadcast-after-wake: a broadcast list in a field, emptied by hibernation
	// field-lost-on-wake: state kept in a field, lost when the object wakes
	// resent-message: a message handler not idempotent across a reconnect-and-resend
	// overtaken-update: an earlier update that overtakes a later one (three callers, no retries)
	// fallback-charge: a fallback that charges again under a new key when a call gives up
	// starved-caller: a first-come, first-served turnstile that starves a caller
	// deposed-leader: a record of three terms that loses the first when a leader is deposed three times
	// batch-resent: a batch resent whole when each of its three sends failed
	// fallback-ladder: an outbox at the end of a fallback ladder that charges again under its own key
}

// A presence list over WebSockets, explored under the default strategy
// (rules W5, C1): the room records each connection in storage as it
// accepts it and forgets it as it closes, but only on a clean close; a
// 101 reply that is lost drops the connection (1006, not clean), and the
// connection stays present for ever. The fixed form forgets any closed
// connection, and explores clean.
func ExampleBug_orphanPresence() {
	b, _ := zoo.Lookup("orphan-presence")
	buggy, err := explore.RunFunc(explore.Options{Seeds: 500}, b.Buggy)
	if err != nil {
		fmt.Println(err)
		return
	}
	fixed, err := explore.RunFunc(explore.Options{Seeds: 500}, b.Fixed)
	if err != nil {
		fmt.Println(err)
		return
	}
	v := buggy.Violations[0]
	fmt.Printf("buggy: seed %d: %s\n", v.Seed, v.Message)
	for _, r := range buggy.FirstFailing.Shrunk {
		fmt.Printf("shrunk to: call %d (%s), attempt %d: %v\n", r.Call, r.Method, r.Attempt, r.Fault)
	}
	fmt.Println("fixed: clean:", fixed.Clean())
	// Output:
	// buggy: seed 1: the room lists 2 connections as present and holds 1 sockets: a connection whose 101 reply was lost dropped and stayed present
	// shrunk to: call 1 (fetch), attempt 1: lose-response
	// fixed: clean: true
}
