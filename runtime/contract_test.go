package runtime_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// The public contract of the design document, written as it is there:
// this file fails to compile if a name or signature drifts.

type Inventory struct{ st *object.State }

func (i *Inventory) Methods() object.Methods {
	return object.Methods{
		"SetQuantity": object.Retryable(i.SetQuantity), // idempotent: may run again on a duplicate
		"AddOne":      object.Func(i.AddOne),           // never runs twice because of a retry
		"Get":         object.Func(i.Get),
		"MakeChild":   object.Func(i.MakeChild),
	}
}

func (i *Inventory) SetQuantity(ctx context.Context, item string, n int) error {
	return i.st.Storage().Put(ctx, item, n)
}

func (i *Inventory) AddOne(ctx context.Context, item string) (int, error) {
	var n int
	found, err := i.st.Storage().Get(ctx, item, &n)
	_ = found
	if err != nil {
		return 0, err
	}
	return n + 1, i.st.Storage().Put(ctx, item, n+1)
}

func (i *Inventory) Get(ctx context.Context, item string) (int, error) {
	var n int
	_, err := i.st.Storage().Get(ctx, item, &n)
	return n, err
}

func (i *Inventory) MakeChild(ctx context.Context) (*child, error) { return &child{}, nil }

type child struct{ object.RpcTarget }

func (c *child) Methods() object.Methods {
	return object.Methods{"Answer": object.Func(func(ctx context.Context, n int) (int, error) { return n, nil })}
}

func TestPublicContract(t *testing.T) {
	log := zap.NewNop()
	plan := transport.Plan(
		transport.Rule{Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse},
		transport.Rule{Method: "Get", Delay: 3 * time.Second}, // link latency before delivery
	)
	rt := runtime.New(runtime.WithSeed(7), runtime.WithLogger(log), runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", func(st *object.State) object.Object { return &Inventory{st: st} })
	err := rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error { return nil })
		err := g.Wait()
		require.NoError(t, err)
		err = rt.Sleep(ctx, time.Second)
		require.NoError(t, err)
		now := rt.Now()
		require.Equal(t, runtime.Epoch.Add(time.Second), now)

		id := ns.IDFromName("a")
		uid := ns.NewUniqueID()
		id2, err := ns.IDFromString(id.String())
		require.NoError(t, err)
		require.True(t, id2.Equal(id))
		_ = uid
		s, err := ns.Get(id, stub.MaxRetries(2), stub.TimeoutMs(1500))
		require.NoError(t, err)
		require.Equal(t, 2, s.MaxRetries())
		s, err = ns.GetByName("a") // defaults: 4 retries, 10000 ms
		require.NoError(t, err)
		require.Equal(t, 4, s.MaxRetries())

		v, err := s.Call(ctx, "SetQuantity", "apple", 3) // RPC; v is a copy of the method's result
		require.NoError(t, err)
		require.Nil(t, v)
		n, err := stub.CallAs[int](ctx, s, "Get", "apple")
		require.NoError(t, err)
		require.Equal(t, 3, n)
		req, _ := http.NewRequest(http.MethodGet, "http://a/", nil)
		resp, err := s.Fetch(ctx, req) // *http.Request in, *http.Response out
		require.Nil(t, resp)
		require.ErrorIs(t, err, object.ErrNoMethod, "Inventory has no fetch handler")
		p := s.Start(ctx, "MakeChild")
		q := p.Pipeline("Answer", 42)
		v, err = q.Await()
		require.NoError(t, err)
		require.Equal(t, 42, v)
		_, err = s.Call(ctx, "AddOne", "apple")
		var e *stub.Error
		require.True(t, errors.As(err, &e)) // e.Retryable, e.Overloaded, e.Remote
		require.True(t, e.Retryable && !e.Overloaded && !e.Remote)
		require.False(t, errors.Is(err, stub.ErrType) || errors.Is(err, stub.ErrRange))
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, rt.Advance(time.Second)) // move virtual time on, running what falls due
	calls := rt.Calls()                         // []runtime.CallRecord, see D2
	var _ runtime.CallRecord = calls[0]
	var _ runtime.AttemptRecord = calls[0].Attempts[0]
	var _ *runtime.Group = rt.Group(context.Background())
	var _ stub.Option = stub.MaxRetries(1)
	var _ *stub.Promise
	var _ object.Method = object.Func(nil)
	var _ *object.Storage
	var _ object.RpcTarget
	var _ transport.Rule
	var _ transport.Fault = transport.NotDelivered
}
