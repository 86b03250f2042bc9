package zoo

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// Account holds a balance. Deposit takes an idempotency key; keyed, it
// remembers the key with the new balance, in one write, and answers a key
// it has seen with the balance it answered then; unkeyed (the planted
// bugs), it ignores the key. Marked, Deposit is marked Retryable.
type Account struct {
	st            *object.State
	keyed, marked bool
}

// Methods lists Deposit (marked Retryable when the account is marked) and
// Balance (marked Retryable: a read).
func (a *Account) Methods() object.Methods {
	dep := object.Func(a.Deposit)
	if a.marked {
		dep = object.Retryable(a.Deposit)
	}
	return object.Methods{"Deposit": dep, "Balance": object.Retryable(a.Balance)}
}

// Deposit adds amount under key and returns the new balance.
func (a *Account) Deposit(ctx context.Context, key string, amount int) (int, error) {
	s := a.st.Storage()
	if a.keyed {
		var answer int
		if seen, err := s.Get(ctx, "deposit/"+key, &answer); err != nil || seen {
			return answer, err
		}
	}
	n, err := a.Balance(ctx)
	if err != nil {
		return 0, err
	}
	n += amount
	writes := map[string]any{"balance": n}
	if a.keyed {
		writes["deposit/"+key] = n
	}
	return n, s.PutMany(ctx, writes)
}

// Balance returns the balance.
func (a *Account) Balance(ctx context.Context) (int, error) {
	var n int
	_, err := a.st.Storage().Get(ctx, "balance", &n)
	return n, err
}

// depositOnce deposits 100 once, through the stub's own retries, and
// checks that the balance holds it at most once.
func depositOnce(keyed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("ACCOUNT", func(st *object.State) object.Object { return &Account{st: st, keyed: keyed, marked: true} })
		s, err := ns.GetByName("alice")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Deposit", "d-1", 100)
		n, err := readInt(ctx, ns, "alice", "Balance")
		if err == nil && n > 100 {
			return fmt.Errorf("one deposit of 100 left a balance of %d: the marked Deposit ran again on a retry", n)
		}
		return nil
	}
}

var markedWithoutKey = Bug{
	Name: "marked-without-key", Kind: "a marked (Retryable) method without a key",
	Needs: "one fault: a lost response (or a loss while running) and the stub's retry",
	Buggy: depositOnce(false), Fixed: depositOnce(true), FoundBy: FoundByRandom,
}

// depositThroughResets deposits 100 under one key from an application
// loop that calls again when the object was reset (the stub does not
// retry a failure after delivery, so people write this loop), and checks
// that the balance holds it at most once.
func depositThroughResets(keyed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("ACCOUNT", func(st *object.State) object.Object { return &Account{st: st, keyed: keyed} })
		for range 3 {
			s, err := ns.GetByName("alice")
			if err != nil {
				return err
			}
			if _, err := s.Call(ctx, "Deposit", "d-1", 100); !resetErr(err) {
				break
			}
		}
		n, err := readInt(ctx, ns, "alice", "Balance")
		if err == nil && n > 100 {
			return fmt.Errorf("one deposit of 100 left a balance of %d: the loop called again after a reset and nothing knew the deposit", n)
		}
		return nil
	}
}

var resetMidTransfer = Bug{
	Name: "reset-mid-transfer", Kind: "a reset mid-transfer without a key",
	Needs:     "one fault: fail-after-delivery, after the write, then the caller's own loop",
	Elsewhere: "testdata/cli/reset-retry-without-key.yaml (examples.Ledger.Deposit); its fixed form testdata/scenarios/reset-during-transfer.yaml",
	Buggy:     depositThroughResets(false), Fixed: depositThroughResets(true), FoundBy: FoundByRandom,
}

// Desk hands out numbered tickets, one per key. Take is marked Retryable
// and remembers each key. Buggy, it stores the fact (the key was served)
// and answers a key it has seen with the number it would give now, not
// the one it gave; fixed, it stores the answer.
type Desk struct {
	st    *object.State
	fixed bool
}

// Methods lists Take (marked Retryable: idempotent by its key).
func (d *Desk) Methods() object.Methods {
	return object.Methods{"Take": object.Retryable(d.Take)}
}

// Take returns key's ticket number.
func (d *Desk) Take(ctx context.Context, key string) (int, error) {
	s := d.st.Storage()
	var last int
	if _, err := s.Get(ctx, "last", &last); err != nil {
		return 0, err
	}
	if d.fixed {
		var answer int
		if seen, err := s.Get(ctx, "ticket/"+key, &answer); err != nil || seen {
			return answer, err
		}
	} else if seen, err := s.Get(ctx, "ticket/"+key, new(bool)); err != nil || seen {
		return last, err // the fact that key was served, answered with today's count
	}
	last++
	stored := any(true)
	if d.fixed {
		stored = last
	}
	return last, s.PutMany(ctx, map[string]any{"last": last, "ticket/" + key: stored})
}

// takeTwo has ada and bob take a ticket a millisecond apart, and checks
// that they hold different numbers.
func takeTwo(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("DESK", func(st *object.State) object.Object { return &Desk{st: st, fixed: fixed} })
		got := map[string]int{}
		g := rt.Group(ctx)
		for i, who := range []string{"ada", "bob"} {
			g.Go(func(ctx context.Context) error {
				if err := rt.Sleep(ctx, timeMs(i)); err != nil {
					return err
				}
				s, err := ns.GetByName("desk")
				if err != nil {
					return err
				}
				if n, err := stub.CallAs[int](ctx, s, "Take", who); err == nil {
					got[who] = n
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		if a, ok := got["ada"]; ok && a == got["bob"] {
			return fmt.Errorf("ada and bob both hold ticket %d: a retry was answered with the count, not the ticket", a)
		}
		return nil
	}
}

var factNotAnswer = Bug{
	Name: "fact-not-answer", Kind: "a key that stores the fact, not the answer",
	Needs: "one fault: a lost response, and another call before the retry",
	Buggy: takeTwo(false), Fixed: takeTwo(true), FoundBy: FoundByRandom,
}

// Notifier emails a customer once per key: it remembers the key before it
// emails (the output gate holds the email until the key is durable, rule
// L7, so a write that fails sends nothing), and sends nothing for a key it
// has seen. It is the fixed form
// of examples.Mailer, whose Send is marked Retryable and emails again on
// every run.
type Notifier struct{ st *object.State }

// Methods lists Send (marked Retryable: idempotent by its key).
func (n *Notifier) Methods() object.Methods {
	return object.Methods{"Send": object.Retryable(n.Send)}
}

// Send emails to, once for key.
func (n *Notifier) Send(ctx context.Context, key, to, subject string) error {
	s := n.st.Storage()
	if seen, err := s.Get(ctx, "sent/"+key, new(bool)); err != nil || seen {
		return err
	}
	if err := s.Put(ctx, "sent/"+key, true); err != nil {
		return err
	}
	return n.st.Effect(ctx, "email", examples.Email{To: to, Subject: subject})
}

// sendOnce sends one email and checks that the customer got at most one.
func sendOnce(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ctor, args := examples.NewMailer, []any{"ada@example.com", "Your order has shipped"}
		if fixed {
			ctor = func(st *object.State) object.Object { return &Notifier{st: st} }
			args = append([]any{"order-42"}, args...)
		}
		ns := rt.Namespace("MAIL", ctor)
		s, err := ns.GetByName("newsletter")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Send", args...)
		emails := 0
		for _, e := range rt.Effects() {
			if e.Kind == "email" {
				emails++
			}
		}
		if emails > 1 {
			return fmt.Errorf("the customer got %d emails for one Send: each retry sent another", emails)
		}
		return nil
	}
}

var amplifiedEffect = Bug{
	Name: "retry-amplified-effect", Kind: "a retry-amplified external effect",
	Needs:     "one fault: a lost response, and the stub's retry of a marked method",
	Elsewhere: "examples.Mailer; testdata/scenarios/mailer-vs-ledger.yaml",
	Buggy:     sendOnce(false), Fixed: sendOnce(true), FoundBy: FoundByRandom,
}
