package dosimtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// builtIns are the example classes the shipped scenarios name.
var builtIns = scenario.WithBuiltInClasses(examples.Constructors())

// fakeT records what a test would report, so that the helpers' failures
// can be checked without failing this test.
type fakeT struct {
	testing.TB
	errors, logs []string
	failed       bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.failed = true
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...) }
func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Failed() bool { return f.failed }

// printT is a testing.TB that prints what a test would report; examples
// have no *testing.T.
type printT struct{ testing.TB }

func (printT) Helper()                           {}
func (printT) Name() string                      { return "TestExample" }
func (printT) Context() context.Context          { return context.Background() }
func (printT) Errorf(format string, args ...any) { fmt.Printf("FAIL: "+format+"\n", args...) }
func (printT) Fatalf(format string, args ...any) { fmt.Printf("FATAL: "+format+"\n", args...) }
func (printT) Logf(format string, args ...any)   { fmt.Printf("log: "+format+"\n", args...) }

// wallet is a user's class: Deposit is marked Retryable and is safe to
// retry, because it remembers each transaction's key.
type wallet struct{ st *object.State }

func newWallet(st *object.State) object.Object { return &wallet{st: st} }

func (w *wallet) Methods() object.Methods {
	return object.Methods{"Deposit": object.Retryable(w.Deposit)}
}

func (w *wallet) Deposit(ctx context.Context, tx string, amount int) (int, error) {
	s := w.st.Storage()
	var bal int
	if _, err := s.Get(ctx, "balance", &bal); err != nil {
		return 0, err
	}
	if ok, err := s.Get(ctx, "tx:"+tx, new(bool)); err != nil || ok {
		return bal, err
	}
	if err := s.Put(ctx, "tx:"+tx, true); err != nil {
		return 0, err
	}
	bal += amount
	return bal, s.Put(ctx, "balance", bal)
}

// counter is a planted bug: Add is marked Retryable but is not idempotent.
type counter struct{ st *object.State }

func newCounter(st *object.State) object.Object { return &counter{st: st} }

func (c *counter) Methods() object.Methods {
	return object.Methods{"Add": object.Retryable(c.Add)}
}

func (c *counter) Add(ctx context.Context, n int) (int, error) {
	var v int
	if _, err := c.st.Storage().Get(ctx, "n", &v); err != nil {
		return 0, err
	}
	v += n
	return v, c.st.Storage().Put(ctx, "n", v)
}

func counterFunc(ctx context.Context, rt *runtime.Runtime) error {
	s, err := rt.Namespace("COUNTER", newCounter).GetByName("c")
	if err != nil {
		return err
	}
	for range 3 {
		_, _ = s.Call(ctx, "Add", 1)
	}
	return nil
}

// shop has one method for each of Verify's outcomes.
type shop struct{ st *object.State }

func (s *shop) Methods() object.Methods {
	return object.Methods{
		"SetPrice":  object.Retryable(s.SetPrice),  // idempotent and marked: silent
		"SendOffer": object.Retryable(s.SendOffer), // marked, but each run sends: fails
		"Price":     object.Func(s.Price),          // idempotent, unmarked: logged
		"Bump":      object.Func(s.Bump),           // not idempotent, unmarked: silent
		"Refuse":    object.Retryable(s.Refuse),    // always fails the same way: inconclusive (C6)
	}
}

func newShop(st *object.State) object.Object { return &shop{st: st} }

func (s *shop) SetPrice(ctx context.Context, p int) error { return s.st.Storage().Put(ctx, "price", p) }

func (s *shop) SendOffer(ctx context.Context, to string) error {
	return s.st.Effect(ctx, "email", fmt.Sprintf("offer to %s", to))
}

func (s *shop) Price(ctx context.Context) (int, error) {
	var p int
	_, err := s.st.Storage().Get(ctx, "price", &p)
	return p, err
}

func (s *shop) Bump(ctx context.Context) (int, error) {
	p, err := s.Price(ctx)
	if err != nil {
		return 0, err
	}
	return p + 1, s.st.Storage().Put(ctx, "price", p+1)
}

func (s *shop) Refuse(ctx context.Context) error { return fmt.Errorf("closed on sundays") }
