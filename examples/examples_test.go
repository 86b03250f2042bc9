package examples_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestClassesAreListedAndBuild(t *testing.T) {
	names := examples.ClassNames()
	assert.Equal(t, []string{"booth", "booth-leaky", "bucket", "chat", "chores", "counter", "inventory", "ledger", "mailer", "outbox", "seats", "seats-leaky", "session", "tally"}, names)
	assert.True(t, slices.IsSorted(names))
	_, ok := examples.LookupClass("nope")
	assert.False(t, ok)
	for _, c := range examples.Classes() {
		got, ok := examples.LookupClass(c.Name)
		require.True(t, ok)
		assert.Equal(t, c.Name, got.Name)
		assert.NotEmpty(t, c.Doc)
		// Every method has a valid signature: the runtime builds each class.
		rt := runtime.New()
		ns := rt.Namespace("N", c.New)
		err := rt.Run(func(ctx context.Context) error {
			s, err := ns.GetByName("x")
			if err != nil {
				return err
			}
			_, err = s.Call(ctx, "NoSuchMethod")
			if !strings.Contains(fmt.Sprint(err), "does not implement the method \"NoSuchMethod\"") {
				return fmt.Errorf("%s: want a no-method error, got %v", c.Name, err)
			}
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, rt.Close())
	}
}

// run runs fn in a fresh runtime with plan, for one class.
func run(t *testing.T, plan *transport.FaultPlan, ctor runtime.Constructor, fn func(ctx context.Context, s *stub.Stub, rt *runtime.Runtime)) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(runtime.WithSeed(3), runtime.WithFaults(plan))
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	ns := rt.Namespace("N", ctor)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("x")
		if err != nil {
			return err
		}
		fn(ctx, s, rt)
		return nil
	}))
	return rt
}

func TestCounter(t *testing.T) {
	run(t, nil, examples.NewCounter, func(ctx context.Context, s *stub.Stub, _ *runtime.Runtime) {
		c := examples.NewCounterStub(s) // the typed client (examples_stub.go)
		for want := 1; want <= 3; want++ {
			n, err := c.Increment(ctx)
			require.NoError(t, err)
			assert.Equal(t, want, n)
		}
		require.NoError(t, c.Reset(ctx))
		n, err := c.Get(ctx)
		require.NoError(t, err)
		assert.Equal(t, 0, n)
	})
}

// The classic mistake: a lost reply makes the marked Send run twice.
func TestMailerSendsTwiceOnALostReply(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Send", Attempt: 1, Fault: transport.LoseResponse})
	rt := run(t, plan, examples.NewMailer, func(ctx context.Context, s *stub.Stub, _ *runtime.Runtime) {
		n, err := stub.CallAs[int](ctx, s, "Send", "ada@example.com", "hi")
		require.NoError(t, err)
		assert.Equal(t, 2, n, "the caller sees one success; two emails left")
		_, err = s.Call(ctx, "Send", "", "hi")
		assert.ErrorContains(t, err, "no recipient")
	})
	effects := rt.Effects()
	require.Len(t, effects, 2)
	assert.Equal(t, examples.Email{To: "ada@example.com", Subject: "hi"}, effects[1].Payload)
}

// The fix: the idempotency key makes the second run a no-op.
func TestLedgerTransfersOnceOnALostReply(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Transfer", Attempt: 1, Fault: transport.LoseResponse})
	rt := run(t, plan, examples.NewLedger, func(ctx context.Context, s *stub.Stub, _ *runtime.Runtime) {
		book := examples.NewLedgerStub(s)
		_, err := book.Deposit(ctx, "alice", 100)
		require.NoError(t, err)
		require.NoError(t, book.Transfer(ctx, "t1", "alice", "bob", 30))
		for acct, want := range map[string]int{"alice": 70, "bob": 30} {
			n, err := book.Balance(ctx, acct)
			require.NoError(t, err)
			assert.Equal(t, want, n, acct)
		}
		// A new key moves money again; bad transfers change nothing.
		assert.ErrorContains(t, book.Transfer(ctx, "t2", "alice", "bob", 80), "alice has 70, cannot send 80")
		assert.ErrorContains(t, book.Transfer(ctx, "", "alice", "bob", 1), "idempotency key is required")
		_, err = book.Deposit(ctx, "alice", 0)
		assert.ErrorContains(t, err, "amount must be > 0")
	})
	assert.Equal(t, 2, rt.Calls()[1].Executions(), "Transfer ran twice, moved the money once")
}

func TestBucketServesFetch(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "fetch", Attempt: 1, Fault: transport.NotDelivered})
	rt := run(t, plan, examples.NewBucket, func(ctx context.Context, s *stub.Stub, rt *runtime.Runtime) {
		do := func(method, path string, body io.Reader) (int, string, error) {
			req, err := http.NewRequestWithContext(ctx, method, "http://b"+path, body)
			require.NoError(t, err)
			resp, err := s.Fetch(ctx, req)
			if err != nil {
				return 0, "", err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b), nil
		}
		code, _, err := do(http.MethodPut, "/cat", strings.NewReader("meow"))
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, code, "a rewindable body is sent again")
		code, body, err := do(http.MethodGet, "/cat", nil)
		require.NoError(t, err)
		assert.Equal(t, "meow", body)
		assert.Equal(t, http.StatusOK, code)
		_, _, err = do(http.MethodPut, "/dog", struct{ io.Reader }{strings.NewReader("woof")})
		assert.Error(t, err, "a streaming body is sent once")
		// That failure broke s (rule L2): go on through a fresh stub.
		s, err = rt.Namespaces()[0].GetByName("x")
		require.NoError(t, err)
		code, _, err = do(http.MethodGet, "/dog", nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, code)
		code, _, err = do(http.MethodPost, "/cat", nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusMethodNotAllowed, code)
		code, _, err = do(http.MethodDelete, "/cat", nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNoContent, code)
		n, err := stub.CallAs[int](ctx, s, "Size")
		require.NoError(t, err)
		assert.Equal(t, 0, n)
	})
	assert.Equal(t, transport.OutcomeNotReplayable, rt.Calls()[2].Outcome)
}

// Mailer.Send is marked Retryable, yet every run sends an email: when a
// reply is lost, the retry runs it again and the customer gets two.
func ExampleMailer() {
	plan := transport.Plan(transport.Rule{Method: "Send", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("MAIL", examples.NewMailer)
	_ = rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("newsletter")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Send", "ada@example.com", "Your order has shipped")
		fmt.Println("caller sees:", err)
		return nil
	})
	for _, e := range rt.Effects() {
		fmt.Println(e.Kind, e.Payload, "attempt", e.Attempt)
	}
	// Output:
	// caller sees: <nil>
	// email {ada@example.com Your order has shipped} attempt 1
	// email {ada@example.com Your order has shipped} attempt 2
}

// Ledger.Transfer is marked Retryable and is safe to be: its idempotency
// key makes the second run change nothing.
func ExampleLedger() {
	plan := transport.Plan(transport.Rule{Method: "Transfer", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("BANK", examples.NewLedger)
	_ = rt.Run(func(ctx context.Context) error {
		book := examples.FreshLedgerStub(ns, "main") // typed, a fresh stub per call (rule L2)
		if _, err := book.Deposit(ctx, "alice", 100); err != nil {
			return err
		}
		if err := book.Transfer(ctx, "order-42", "alice", "bob", 30); err != nil {
			return err
		}
		alice, _ := book.Balance(ctx, "alice")
		bob, _ := book.Balance(ctx, "bob")
		fmt.Println("alice", alice, "bob", bob)
		return nil
	})
	fmt.Println("Transfer ran", rt.Calls()[1].Executions(), "times")
	// Output:
	// alice 70 bob 30
	// Transfer ran 2 times
}
