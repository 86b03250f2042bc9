package zoo

import (
	"context"
	"errors"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// Driver runs one scenario of a bug as the root task of rt: what
// explore.RunFunc explores. It returns an error when it sees the bug's
// symptom (its own check, beside the explorer's).
type Driver = func(ctx context.Context, rt *runtime.Runtime) error

// Bug is one planted bug of the zoo, with its fixed form.
type Bug struct {
	// Name is how tests and the time-to-find table name the bug.
	Name string
	// Kind says in one line what kind of bug it is.
	Kind string
	// Needs says what a run must draw to show the bug: the faults, the
	// timing or neither.
	Needs string
	// Elsewhere names where the same bug also lives in the repository (a
	// scenario, an example class), or is empty.
	Elsewhere string
	// Buggy shows the bug; Fixed is the same run on the fixed form.
	Buggy, Fixed Driver
	// Rates are the fault rates the bug needs, when the explorer's
	// defaults do not name its fault (nil: the defaults).
	Rates transport.Rates
	// Background says the runs do background work (alarms, schedules,
	// queues) whose histories the linearizability check counts as not
	// checked: a sweep of the fixed form sets no minimum share of checked
	// histories.
	Background bool
	// Interleaving names the turns the fixed form means to interleave at
	// their awaits (explore.Options.Interleaving): its driver's own check
	// judges what they do, as it judges the buggy form's.
	Interleaving []string
	// FoundBy names the simplest search strategy that finds the bug within
	// 10,000 seeds: FoundByRandom (random fault draws alone: the random
	// tie-break, fixed rates, no latency), FoundByLatency, FoundBySwarm,
	// FoundByPCT, FoundByExhaustive or FoundByFuzz. Every bug but the
	// FoundByRandom ones is deep: random fault draws alone miss it within
	// 10,000 seeds.
	FoundBy string
	// Depth is, for a bug FoundByPCT, the PCT depth it needs: its
	// ordering changes plus one (0: the default depth, 3, finds it).
	Depth int
}

// The strategies a Bug's FoundBy names.
const (
	// FoundByRandom is random fault draws at fixed rates, with the random
	// tie-break and no link latency.
	FoundByRandom = "random"
	// FoundByLatency is FoundByRandom with the explorer's link latency.
	FoundByLatency = "latency"
	// FoundBySwarm is a swarm sweep: each seed draws its own fault profile.
	FoundBySwarm = "swarm"
	// FoundByPCT is the PCT scheduling strategy (explore.Options.Strategy).
	FoundByPCT = "pct"
	// FoundByExhaustive is bounded exhaustive search (Options.Exhaustive,
	// MaxFaults 3).
	FoundByExhaustive = "exhaustive"
	// FoundByFuzz is a coverage-guided fuzzer choosing the decisions from
	// its input bytes (dosimtest.Fuzz).
	FoundByFuzz = "fuzz"
)

// Bugs returns the zoo, in the order of the package's table: the
// seventeen shallow bugs (the last four over WebSockets), then the deep
// ones. The slice is
// new on every call.
func Bugs() []Bug {
	return []Bug{
		lostUpdate, checkThenAct, markedWithoutKey, factNotAnswer,
		amplifiedEffect, overtakenRetry, alarmForever, poisonedQueue,
		scheduleOnRestart, unconfirmedReply, resetMidTransfer, twoFaults, crashWindow,
		orphanPresence, broadcastAfterWake, fieldLostOnWake, resentMessage,
		overtakenUpdate, fallbackCharge, starvedCaller, deposedLeaderBug, batchResent, fallbackLadder,
	}
}

// Lookup returns the bug called name.
func Lookup(name string) (Bug, bool) {
	for _, b := range Bugs() {
		if b.Name == name {
			return b, true
		}
	}
	return Bug{}, false
}

// resetErr reports whether err says the object was reset or failed after
// delivery: a failure the stub does not retry, which an application loop
// often does.
func resetErr(err error) bool {
	var se *stub.Error
	return errors.As(err, &se) && !se.Retryable && !se.Remote && !se.Overloaded
}

// timeMs is i milliseconds.
func timeMs(i int) time.Duration { return time.Duration(i) * time.Millisecond }
