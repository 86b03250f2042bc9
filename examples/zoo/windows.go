package zoo

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// Two bugs the default search once could not see: a crash window, which
// only a reset or a storage write that fails opens (the default rates
// did not draw them), and an ordering that changes hands three times,
// which PCT finds only at depth 4 (mix's PCT seeds ran depth 3).

// Biller charges an order once, remembering it under the order's key:
// Charge is marked Retryable. Buggy, it records the charge (the effect,
// a payment provider's call) before it writes the key: a reset, or a
// storage write that fails, between the two keeps the charge and loses
// the key, and the caller's retry charges again. Fixed, it writes the key
// and waits for it to be durable (Storage.Sync) before it charges.
type Biller struct {
	st    *object.State
	fixed bool
}

// Methods lists Charge, marked Retryable: a retry finds the key.
func (b *Biller) Methods() object.Methods {
	return object.Methods{"Charge": object.Retryable(b.Charge)}
}

// Charge charges order once and answers "charged": a retry finds the
// answer under the order's key and gives it again.
func (b *Biller) Charge(ctx context.Context, order string) (string, error) {
	s := b.st.Storage()
	key := "charged:" + order
	var answer string
	if ok, err := s.Get(ctx, key, &answer); err != nil || ok {
		return answer, err
	}
	if b.fixed {
		if err := s.Put(ctx, key, "charged"); err != nil {
			return "", err
		}
		if err := s.Sync(ctx); err != nil {
			return "", err // not durable: no charge either
		}
		return "charged", b.st.Effect(ctx, "charge", order)
	}
	if err := b.st.Effect(ctx, "charge", order); err != nil {
		return "", err
	}
	return "charged", s.Put(ctx, key, "charged") // the crash window: charged, not yet remembered
}

// chargeOnce charges one order, and, as an application does, tries again
// through a fresh stub when the object was reset under the call (the stub
// does not retry that). The order must be charged at most once.
func chargeOnce(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("BILLER", func(st *object.State) object.Object { return &Biller{st: st, fixed: fixed} })
		for range 3 {
			s, err := ns.GetByName("shop")
			if err != nil {
				return err
			}
			if _, err := s.Call(ctx, "Charge", "order-9"); err == nil || !resetErr(err) {
				break
			}
		}
		charges := 0
		for _, e := range rt.Effects() {
			if e.Kind == "charge" {
				charges++
			}
		}
		if charges > 1 {
			return fmt.Errorf("order-9 charged %d times: the key was lost in the crash window after the charge", charges)
		}
		return nil
	}
}

var crashWindow = Bug{
	Name: "crash-window", Kind: "a key written after its effect: a crash between them charges twice",
	Needs: "a crash window: a reset, or a storage write that fails, between the charge and its key",
	Buggy: chargeOnce(false), Fixed: chargeOnce(true),
	FoundBy: FoundByRandom,
}

// Throne keeps the leaders of its rounds and the terms they served: each
// round (Claim) the first claimant leads; a leader who leads TermRounds
// rounds in a row serves a term. Buggy, its record of terms keeps the
// last three (a ring); fixed, all of them. Four terms in ThroneRounds
// rounds need the lead to change hands three times, each after a long
// reign: PCT's depth 4, three ordering changes.
type Throne struct {
	st    *object.State
	fixed bool
}

// The rounds of the deposed-leader bug, the rounds a reign must last to
// be a term, and the leader's steps of work each round it leads.
const (
	ThroneRounds = 40
	TermRounds   = 6
	LeaderWork   = 4
)

// Methods lists Claim and Terms (not marked: a claim is not safe to
// repeat).
func (t *Throne) Methods() object.Methods {
	return object.Methods{"Claim": object.Func(t.Claim), "Terms": object.Func(t.Terms)}
}

// Claim claims round for who and answers the round's leader: the first
// claimant of the round, whenever the claims of other rounds arrive.
func (t *Throne) Claim(ctx context.Context, round int, who string) (string, error) {
	if round < 1 || round > ThroneRounds {
		return "", fmt.Errorf("round %d: want 1 to %d", round, ThroneRounds)
	}
	s := t.st.Storage()
	leaders := make([]string, ThroneRounds+1)
	if _, err := s.Get(ctx, "leaders", &leaders); err != nil {
		return "", err
	}
	if l := leaders[round]; l != "" {
		return l, nil
	}
	leaders[round] = who
	return who, s.Put(ctx, "leaders", leaders)
}

// Terms answers the terms served, in order.
func (t *Throne) Terms(ctx context.Context) ([]string, error) {
	leaders := make([]string, ThroneRounds+1)
	if _, err := t.st.Storage().Get(ctx, "leaders", &leaders); err != nil {
		return nil, err
	}
	terms := termsOf(leaders[1:])
	if !t.fixed && len(terms) > 3 {
		terms = terms[len(terms)-3:] // the ring of three
	}
	return terms, nil
}

// deposedLeader runs three claimants that claim every round at the same
// instants, works out the terms from the leaders the rounds answered, and
// checks the throne's record against them.
func deposedLeader(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("THRONE", func(st *object.State) object.Object { return &Throne{st: st, fixed: fixed} })
		leaders := make([]string, ThroneRounds+1)
		g := rt.Group(ctx)
		for _, who := range []string{"ana", "bo", "cy"} {
			g.Go(func(ctx context.Context) error {
				for round := 1; round <= ThroneRounds; round++ {
					// Every claimant claims at the round's instant, whatever
					// work it did in the round before.
					if err := rt.Sleep(ctx, time.Duration(round)*time.Second-rt.Elapsed()); err != nil {
						return err
					}
					s, err := ns.GetByName("realm", stub.MaxRetries(0))
					if err != nil {
						return err
					}
					l, err := stub.CallAs[string](ctx, s, "Claim", round, who)
					if err != nil {
						continue
					}
					if l != "" {
						leaders[round] = l
					}
					if l != who {
						continue
					}
					for range LeaderWork { // the leader's work of the round
						if err := rt.Sleep(ctx, time.Microsecond); err != nil {
							return err
						}
					}
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		want := termsOf(leaders[1:])
		s, err := ns.GetByName("realm")
		if err != nil {
			return err
		}
		got, err := stub.CallAs[[]string](ctx, s, "Terms")
		if err != nil {
			return nil // the record could not be read: nothing to compare
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("the throne records the terms %v, but the rounds were led to %v", got, want)
		}
		return nil
	}
}

// termsOf works out the terms from each round's leader ("" for a round
// whose answer was lost, which ends a reign).
func termsOf(leaders []string) []string {
	var terms []string
	held, last := 0, ""
	for _, l := range leaders {
		if l == last {
			held++
		} else {
			last, held = l, 1
		}
		if held == TermRounds && l != "" {
			terms = append(terms, l)
		}
	}
	return terms
}

var deposedLeaderBug = Bug{
	Name: "deposed-leader", Kind: "a record of three terms that loses the first when a leader is deposed three times",
	Needs: "scheduling: the lead to change hands three times, each after five rounds or more (PCT depth 4)",
	Buggy: deposedLeader(false), Fixed: deposedLeader(true),
	Rates: NoFaults, FoundBy: FoundByPCT, Depth: 4,
}
