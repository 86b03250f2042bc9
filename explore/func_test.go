package explore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeT records what a test would report, so that dosimtest.Func's
// failures can be checked without failing this test.
type fakeT struct {
	testing.TB
	errors []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...) }

// wallet is a user's class: Deposit is marked Retryable and is safe to
// retry, because it remembers each transaction's key.
type wallet struct{ st *object.State }

func newWallet(st *object.State) object.Object { return &wallet{st: st} }

func (w *wallet) Methods() object.Methods {
	return object.Methods{
		"Deposit": object.Retryable(w.Deposit),
		"Balance": object.Retryable(w.Balance),
	}
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

func (w *wallet) Balance(ctx context.Context) (int, error) {
	var bal int
	_, err := w.st.Storage().Get(ctx, "balance", &bal)
	return bal, err
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

func walletFunc(ctx context.Context, rt *runtime.Runtime) error {
	ns := rt.Namespace("WALLET", newWallet)
	s, err := ns.GetByName("alice")
	if err != nil {
		return err
	}
	_, _ = s.Call(ctx, "Deposit", "tx-1", 50) // errors may be expected under faults
	_, _ = s.Call(ctx, "Deposit", "tx-2", 20)
	_, _ = s.Call(ctx, "Balance")
	return nil
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

// TestU3_FuncCleanOnACorrectClass: a class whose marked methods are
// idempotent passes every seed, and its histories are checked.
func TestU3_FuncCleanOnACorrectClass(t *testing.T) {
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, explore.Options{Seeds: 300}, walletFunc)
	require.NotNil(t, sum)
	assert.Empty(t, ft.errors)
	assert.True(t, sum.Clean(), "violations: %v", sum.Violations)
	assert.Equal(t, 300, sum.Ran)
	assert.Greater(t, sum.Histories, 250, "most histories must be checked, not skipped")
}

// TestU3_FuncReportsTheFunctionsError: an error the function returns is a
// violation of kind func, with its message.
func TestU3_FuncReportsTheFunctionsError(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, explore.Options{Seeds: 50, Rates: transport.Rates{}}, func(ctx context.Context, rt *runtime.Runtime) error {
		s, err := rt.Namespace("WALLET", newWallet).GetByName("bob")
		if err != nil {
			return err
		}
		bal, err := stub.CallAs[int](ctx, s, "Deposit", "tx", 5)
		if err == nil && bal != 6 {
			return fmt.Errorf("balance is %d, my assertion wants 6", bal)
		}
		return err
	})
	require.NotNil(t, sum)
	assert.Equal(t, 50, sum.Failed)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "func: balance is 5, my assertion wants 6")
	assert.Equal(t, explore.KindFunc, sum.Violations[0].Kind)
}

// TestU3_FuncIsDeterministic: the same options give the same summary.
func TestU3_FuncIsDeterministic(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	run := func(workers int) *explore.Summary {
		ft := &fakeT{TB: t}
		return dosimtest.Func(ft, explore.Options{Seeds: 120, Workers: workers}, counterFunc)
	}
	a, b, par := run(1), run(1), run(2)
	assert.Equal(t, a, b)
	assert.Equal(t, a.Violations, par.Violations, "two workers (each its own runtime) find the same violations")
	assert.Equal(t, a.FirstFailing, par.FirstFailing)
	assert.Equal(t, a.Ran, par.Ran)
}

// TestU3_FuncRejectsBadOptions: options out of range fail clearly, naming
// the field and what is allowed.
func TestU3_FuncRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts explore.Options
		fn   func(context.Context, *runtime.Runtime) error
		want string
	}{
		{"no seeds", explore.Options{}, walletFunc, "Seeds is 0, must be >= 1"},
		{"negative seeds", explore.Options{Seeds: -3}, walletFunc, "Seeds is -3, must be >= 1"},
		{"no function", explore.Options{Seeds: 1}, nil, "no function to explore"},
		{"workers", explore.Options{Seeds: 1, Workers: -1}, walletFunc, "Workers -1: want 1 to 256"},
		{"classes", explore.Options{Seeds: 1, Classes: map[string]runtime.Constructor{"X": newWallet}}, walletFunc, "Classes is for scenarios"},
		{"rates", explore.Options{Seeds: 1, Rates: transport.Rates{1: 2}}, walletFunc, "explore options"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, err := explore.RunFunc(tc.opts, tc.fn)
			assert.Nil(t, sum)
			require.ErrorIs(t, err, explore.ErrOptions)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestU3_FuncConstructorPanics: a class whose constructor panics is a
// clear failure naming the namespace, not a crash.
func TestU3_FuncConstructorPanics(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	ft := &fakeT{TB: t}
	sum := dosimtest.Func(ft, explore.Options{Seeds: 5}, func(ctx context.Context, rt *runtime.Runtime) error {
		s, err := rt.Namespace("BROKEN", func(*object.State) object.Object { panic("no config") }).GetByName("x")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Anything")
		if err == nil {
			return errors.New("a call to a broken class succeeded")
		}
		return nil
	})
	require.NotNil(t, sum)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "error BROKEN: the class of namespace BROKEN cannot be built")
	assert.True(t, strings.Contains(ft.errors[0], "no config"), ft.errors[0])
}

// adder adds to a total; Add is not marked, so a retry never runs it twice.
type adder struct{ st *object.State }

func (a *adder) Methods() object.Methods { return object.Methods{"Add": object.Func(a.Add)} }

func (a *adder) Add(ctx context.Context, n int) (int, error) {
	var v int
	if _, err := a.st.Storage().Get(ctx, "n", &v); err != nil {
		return 0, err
	}
	v += n
	return v, a.st.Storage().Put(ctx, "n", v)
}

// relay is an object whose method calls another object: Forward asks the
// ADDER "bank" to add and answers with what it got.
type relay struct {
	st   *object.State
	bank *runtime.Namespace
}

func (r *relay) Methods() object.Methods {
	return object.Methods{"Forward": object.Func(r.Forward)}
}

func (r *relay) Forward(ctx context.Context, tx string, amount int) (int, error) {
	s, err := r.bank.GetByName("bank")
	if err != nil {
		return 0, err
	}
	n, err := stub.CallAs[int](ctx, s, "Add", amount)
	if err != nil {
		return 0, err
	}
	return n, r.st.Storage().Put(ctx, "last", n)
}

// C2: an object whose methods call other objects is checked too: a call
// out is a read of the calling turn (its answer replayed from the
// history) and an effect of the caller; the called object's history is
// checked on its own. Clean on a correct pair, every history checked.
func TestC2_FuncChecksObjectsThatCallOthers(t *testing.T) {
	var callers []string
	ft := &fakeT{TB: t}
	// One worker: the function writes callers, which workers would share.
	sum := dosimtest.Func(ft, explore.Options{Seeds: 300, Workers: 1}, func(ctx context.Context, rt *runtime.Runtime) error {
		bank := rt.Namespace("ADDER", func(st *object.State) object.Object { return &adder{st: st} })
		relays := rt.Namespace("RELAY", func(st *object.State) object.Object { return &relay{st: st, bank: bank} })
		s, err := relays.GetByName("r")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Forward", "tx-1", 5)
		s, err = relays.GetByName("r")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Forward", "tx-2", 7)
		callers = rt.Callers()
		return nil
	})
	assert.Empty(t, ft.errors)
	assert.True(t, sum.Clean(), "violations: %v", sum.Violations)
	assert.Equal(t, []string{"RELAY/r"}, callers)
	assert.Empty(t, sum.Unchecked, "every history is checked")
	assert.Greater(t, sum.Histories, 500, "the relay's and the bank's histories are checked")
}
