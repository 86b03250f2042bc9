package zoo

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// Likes counts a post's likes, each weighted by a call out to a WEIGHTS
// object. Buggy, Like reads the count, awaits the call out (which opens
// the input gate, rule O3) and writes the count it read plus the weight:
// a like that came in during the await is lost. Fixed, it reads the count
// after the await, with no await between the read and the write.
type Likes struct {
	st      *object.State
	weights *runtime.Namespace
	fixed   bool
}

// Methods lists Like (not marked) and Count (marked Retryable: a read).
func (l *Likes) Methods() object.Methods {
	return object.Methods{"Like": object.Func(l.Like), "Count": object.Retryable(l.Count)}
}

// Like adds one like, weighted, and returns the new count.
func (l *Likes) Like(ctx context.Context) (int, error) {
	s := l.st.Storage()
	var n int
	if !l.fixed {
		if _, err := s.Get(ctx, "likes", &n); err != nil {
			return 0, err
		}
	}
	w, err := weightOf(ctx, l.weights)
	if err != nil {
		return 0, err
	}
	if l.fixed {
		if _, err := s.Get(ctx, "likes", &n); err != nil {
			return 0, err
		}
	}
	n += w
	return n, s.Put(ctx, "likes", n)
}

// Count returns the count.
func (l *Likes) Count(ctx context.Context) (int, error) {
	var n int
	_, err := l.st.Storage().Get(ctx, "likes", &n)
	return n, err
}

// Weights answers how much a like weighs: always 1.
type Weights struct{}

// Methods lists Of (marked Retryable: it changes nothing).
func (Weights) Methods() object.Methods {
	return object.Methods{"Of": object.Retryable(func(ctx context.Context) (int, error) { return 1, nil })}
}

func weightOf(ctx context.Context, ns *runtime.Namespace) (int, error) {
	s, err := ns.GetByName("weights")
	if err != nil {
		return 0, err
	}
	return stub.CallAs[int](ctx, s, "Of")
}

// likeTwice has two readers like one post, a millisecond apart, and checks
// that the count holds every like that succeeded.
func likeTwice(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		weights := rt.Namespace("WEIGHTS", func(*object.State) object.Object { return Weights{} })
		ns := rt.Namespace("LIKES", func(st *object.State) object.Object { return &Likes{st: st, weights: weights, fixed: fixed} })
		oks := 0
		g := rt.Group(ctx)
		for i := range 2 {
			g.Go(func(ctx context.Context) error {
				if err := rt.Sleep(ctx, time.Duration(i)*time.Millisecond); err != nil {
					return err
				}
				s, err := ns.GetByName("post-1")
				if err != nil {
					return err
				}
				if _, err := s.Call(ctx, "Like"); err == nil {
					oks++
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		n, err := readInt(ctx, ns, "post-1", "Count")
		if err == nil && n < oks {
			return fmt.Errorf("%d likes succeeded, the count is %d: an update was lost across the await", oks, n)
		}
		return nil
	}
}

// readInt reads an int through a stub that retries as much as it may.
func readInt(ctx context.Context, ns *runtime.Namespace, name, method string, args ...any) (int, error) {
	s, err := ns.GetByName(name, stub.MaxRetries(10))
	if err != nil {
		return 0, err
	}
	return stub.CallAs[int](ctx, s, method, args...)
}

var lostUpdate = Bug{
	Name: "lost-update", Kind: "a lost update across an await",
	Needs: "timing: a second like arrives while the first awaits its call out",
	Buggy: likeTwice(false), Fixed: likeTwice(true), FoundBy: FoundByRandom,
}

// Hall sells one seat. Buggy, Book checks the seat is free, charges the
// card through a call out to CARDS, and only then writes the holder: two
// bookings that overlap at the call both pass the check, and the seat is
// sold twice. Fixed, Book holds the seat before the call out and releases
// it if the charge fails.
type Hall struct {
	st    *object.State
	cards *runtime.Namespace
	fixed bool
}

// Methods lists Book (not marked) and Holder (marked Retryable: a read).
func (h *Hall) Methods() object.Methods {
	return object.Methods{"Book": object.Func(h.Book), "Holder": object.Retryable(h.Holder)}
}

// Book sells the seat to who and returns who, or fails if it is taken.
func (h *Hall) Book(ctx context.Context, who string) (string, error) {
	s := h.st.Storage()
	holder, err := h.Holder(ctx)
	if err != nil {
		return "", err
	}
	if holder != "" {
		return "", fmt.Errorf("the seat is taken by %s", holder)
	}
	if h.fixed {
		if err := s.Put(ctx, "seat", who); err != nil {
			return "", err
		}
	}
	if err := charge(ctx, h.cards, who); err != nil {
		if h.fixed {
			_, _ = s.Delete(ctx, "seat")
		}
		return "", err
	}
	if h.fixed {
		return who, nil
	}
	return who, s.Put(ctx, "seat", who)
}

// Holder returns who holds the seat, or "".
func (h *Hall) Holder(ctx context.Context) (string, error) {
	var who string
	_, err := h.st.Storage().Get(ctx, "seat", &who)
	return who, err
}

// Cards charges cards: each charge is an effect.
type Cards struct{ st *object.State }

// Methods lists Charge (not marked: a charge is not safe to repeat).
func (c *Cards) Methods() object.Methods {
	return object.Methods{"Charge": object.Func(func(ctx context.Context, who string) error {
		return c.st.Effect(ctx, "charge", who)
	})}
}

func charge(ctx context.Context, ns *runtime.Namespace, who string) error {
	s, err := ns.GetByName("cards")
	if err != nil {
		return err
	}
	_, err = s.Call(ctx, "Charge", who)
	return err
}

// bookTwice has ada and bob book the one seat a millisecond apart, and
// checks that at most one of them got it.
func bookTwice(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		cards := rt.Namespace("CARDS", func(st *object.State) object.Object { return &Cards{st: st} })
		ns := rt.Namespace("HALL", func(st *object.State) object.Object { return &Hall{st: st, cards: cards, fixed: fixed} })
		var sold []string
		g := rt.Group(ctx)
		for i, who := range []string{"ada", "bob"} {
			g.Go(func(ctx context.Context) error {
				if err := rt.Sleep(ctx, time.Duration(i)*time.Millisecond); err != nil {
					return err
				}
				s, err := ns.GetByName("show")
				if err != nil {
					return err
				}
				if _, err := s.Call(ctx, "Book", who); err == nil {
					sold = append(sold, who)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		if len(sold) > 1 {
			return fmt.Errorf("the one seat was sold twice, to %v: the check passed for both across the call out", sold)
		}
		return nil
	}
}

// checkThenAct's fixed form holds the seat across its charge and lets it
// go if the charge fails: a booking that comes in meanwhile is told the
// seat is taken by one who may not get it. That is meant (the hold is
// tentative), not atomic: it declares Book meant to interleave, and its
// driver checks what must hold, that the seat is never sold twice.
var checkThenAct = Bug{
	Name: "check-then-act", Kind: "a check-then-act across an outgoing call",
	Needs: "timing: the second booking checks while the first awaits its charge",
	Buggy: bookTwice(false), Fixed: bookTwice(true), FoundBy: FoundByRandom,
	Interleaving: []string{"Book"},
}
