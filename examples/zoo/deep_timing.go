package zoo

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// The deep bugs of timing and scheduling: random fault draws alone (the
// random tie-break, fixed rates, no latency) miss each within 10,000
// seeds; link latency finds the overtaken update, PCT the starved caller.

// Turnstile admits two callers a tick (Enter). Buggy, it serves first
// come, first served, and a caller it rejects keeps no claim on the next
// tick: fair only while the order in which callers arrive at one instant
// is a new coin toss every tick. A caller that is consistently last (the
// one on the slow network, the one the scheduler happens to favour least)
// is starved. Fixed, it owes the caller it rejected a slot at the next
// tick.
type Turnstile struct {
	st    *object.State
	fixed bool
}

// gateState is a turnstile's storage: the tick it is at, how many it
// admitted then, whom it owes a slot (in the fixed form) and whom it
// rejected at this tick.
type gateState struct {
	Tick     int
	Admitted int
	Owed     string
	Rejected string
}

// Methods lists Enter (not marked: an admission is not safe to repeat).
func (g *Turnstile) Methods() object.Methods {
	return object.Methods{"Enter": object.Func(g.Enter)}
}

// Enter asks to pass at tick for who and says whether it may.
func (g *Turnstile) Enter(ctx context.Context, tick int, who string) (bool, error) {
	s := g.st.Storage()
	var st gateState
	if _, err := s.Get(ctx, "gate", &st); err != nil {
		return false, err
	}
	if tick != st.Tick {
		st = gateState{Tick: tick, Owed: st.Rejected}
	}
	free := 2 - st.Admitted
	if g.fixed && st.Owed != "" && st.Owed != who {
		free-- // the slot owed to the caller rejected last tick
	}
	ok := free > 0
	switch {
	case ok:
		st.Admitted++
		if who == st.Owed {
			st.Owed = ""
		}
	default:
		st.Rejected = who
	}
	return ok, s.Put(ctx, "gate", st)
}

// TurnstileTicks is how many ticks each caller of the starved-caller bug
// tries at: a caller rejected at every one of them is starved.
const TurnstileTicks = 16

// turnstileCrowd runs three callers that each try the turnstile once a
// tick, all at the same instants, and fails when one of them never got
// in: the random tie-break makes that one chance in 3^15 a seed; PCT
// makes it likely, as the caller of lowest priority comes last at every
// tick until a change point.
func turnstileCrowd(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("GATE", func(st *object.State) object.Object { return &Turnstile{st: st, fixed: fixed} })
		g := rt.Group(ctx)
		admitted := map[string]int{}
		names := []string{"ana", "bo", "cy"}
		for _, who := range names {
			g.Go(func(ctx context.Context) error {
				for tick := 1; tick <= TurnstileTicks; tick++ {
					if err := rt.Sleep(ctx, 10*time.Millisecond); err != nil {
						return err
					}
					s, err := ns.GetByName("door", stub.MaxRetries(0)) // a stub a call failed on is broken
					if err != nil {
						return err
					}
					if ok, err := stub.CallAs[bool](ctx, s, "Enter", tick, who); err == nil && ok {
						admitted[who]++
					}
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for _, who := range names {
			if admitted[who] == 0 {
				return fmt.Errorf("%s was turned away at all %d ticks: starved", who, TurnstileTicks)
			}
		}
		return nil
	}
}

// NoFaults are rates that draw no fault at all: the starved caller needs
// none, and a fault that turns a favoured caller away hides it.
var NoFaults = transport.Rates{transport.LoseResponse: 0}

var starvedCaller = Bug{
	Name: "starved-caller", Kind: "a first-come, first-served turnstile that starves a caller",
	Needs:     "scheduling: the same caller last at all 16 same-instant ticks (no faults)",
	Elsewhere: "explore/pct_test.go",
	Buggy:     turnstileCrowd(false), Fixed: turnstileCrowd(true),
	Rates: NoFaults, FoundBy: FoundByPCT,
}

// parcelUpdates sends (to the Parcel of overtaken-retry) three status updates from three workers, each its
// own stub that does not retry, a millisecond apart, and checks that the
// parcel ends "shipped" when the last update succeeded. (Without retries
// no fault reorders the updates: one that fails is simply lost.)
func parcelUpdates(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("PARCEL", func(st *object.State) object.Object { return &Parcel{st: st, fixed: fixed} })
		shipped := false
		g := rt.Group(ctx)
		for i, status := range []string{"paid", "packed", "shipped"} {
			g.Go(func(ctx context.Context) error {
				if err := rt.Sleep(ctx, time.Duration(i)*time.Millisecond); err != nil {
					return err
				}
				s, err := ns.GetByName("order-7", stub.MaxRetries(0))
				if err != nil {
					return err
				}
				if _, err := s.Call(ctx, "Set", status); err == nil && status == "shipped" {
					shipped = true
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		s, err := ns.GetByName("order-7", stub.MaxRetries(10))
		if err != nil {
			return err
		}
		got, err := stub.CallAs[string](ctx, s, "Status")
		if err == nil && shipped && got != "shipped" {
			return fmt.Errorf("the parcel ends %q, want shipped: an earlier update overtook a later one", got)
		}
		return nil
	}
}

var overtakenUpdate = Bug{
	Name: "overtaken-update", Kind: "an earlier update that overtakes a later one (three callers, no retries)",
	Needs:     "timing: link latency lets an update sent a millisecond earlier arrive later",
	Elsewhere: "explore/latency_test.go",
	Buggy:     parcelUpdates(false), Fixed: parcelUpdates(true),
	FoundBy: FoundByLatency,
}
