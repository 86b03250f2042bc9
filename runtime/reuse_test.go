package runtime_test

// The reuse of frames, flights and turnInfos (issue 14): each test
// sets up a scenario where something may still hold a reused piece.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowObj's Slow sleeps d, then returns n; Use calls Slow on the stub it is
// passed (a stub argument arrives as a stub of its own, asRef).
type slowObj struct{ st *object.State }

func (o *slowObj) Methods() object.Methods {
	return object.Methods{
		"Slow": object.Func(func(ctx context.Context, n int, d time.Duration) (int, error) {
			if err := o.st.Sleep(ctx, d); err != nil {
				return 0, err
			}
			return n, nil
		}),
		"Use": object.Func(func(ctx context.Context, s *stub.Stub, n int, d time.Duration) (int, error) {
			return stub.CallAs[int](ctx, s, "Slow", n, d)
		}),
	}
}

func slowNS(rt *runtime.Runtime, name string) *runtime.Namespace {
	return rt.Namespace(name, func(st *object.State) object.Object { return &slowObj{st: st} })
}

// requireAllEnded checks that every kept record ended, with the result
// the call returned.
func requireAllEnded(t *testing.T, rt *runtime.Runtime) {
	t.Helper()
	for i, c := range rt.Calls() {
		assert.NotEqual(t, transport.OutcomePending, c.Outcome, "call %d (%s) never ended: its record was lost", i, c.Method)
		assert.NotZero(t, c.Ended, "call %d (%s) has no end stamp", i, c.Method)
	}
}

// A stub passed as an argument is copied (asRef) with its spare frame: the
// copy and the original then run two calls on one frame. The second call
// overwrites the flight the first one's turn still holds: the first turn's
// reply answers the second call, and the first call's record never ends.
func TestL2_AStubCopyRunsOnAFrameOfItsOwn(t *testing.T) {
	rt := newRuntime(t)
	xs, ys := slowNS(rt, "X"), slowNS(rt, "Y")
	var got1, got2 int
	run(t, rt, func(ctx context.Context) error {
		s, err := xs.GetByName("x")
		if err != nil {
			return err
		}
		y, err := ys.GetByName("y")
		if err != nil {
			return err
		}
		// One fault-free call: s keeps its frame as its spare.
		if _, err := s.Call(ctx, "Slow", 0, time.Duration(0)); err != nil {
			return err
		}
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error {
			// Y gets a copy of s (with s's spare) and calls Slow(1) through
			// it: X's turn runs on this task and sleeps 2s.
			v, err := stub.CallAs[int](ctx, y, "Use", s, 1, 2*time.Second)
			got1 = v
			return err
		})
		g.Go(func(ctx context.Context) error {
			if err := rt.Sleep(ctx, time.Second); err != nil {
				return err
			}
			// s still has the frame the copy is using.
			v, err := stub.CallAs[int](ctx, s, "Slow", 2, 2*time.Second)
			got2 = v
			return err
		})
		return g.Wait()
	})
	assert.Equal(t, 1, got1, "the call through the copy")
	assert.Equal(t, 2, got2, "the call through the original")
	requireAllEnded(t, rt)
	require.Len(t, rt.Calls(), 4)
}

// A call that breaks its stub hands its caller a copy of its error, and
// the stub keeps that same copy as the error that broke it (breakLine);
// the later calls' records then keep it uncopied (finish: rec.SetErr). A
// caller that changes the error it got (or the one Broken returns)
// changes the records of the later calls: the trace.
func TestL2_ChangingTheErrorThatBrokeAStubLeavesTheRecordsAlone(t *testing.T) {
	rt := newRuntime(t, runtime.WithFaults(transport.Plan(transport.Rule{Method: "Slow", Call: 1, Fault: transport.Overloaded})))
	xs := slowNS(rt, "X")
	var err1, err2 error
	var broken error
	run(t, rt, func(ctx context.Context) error {
		s, err := xs.GetByName("x")
		if err != nil {
			return err
		}
		_, err1 = s.Call(ctx, "Slow", 1, time.Duration(0))
		_, err2 = s.Call(ctx, "Slow", 2, time.Duration(0))
		broken = s.Broken()
		return nil
	})
	require.Error(t, err1)
	require.Error(t, err2)
	calls := rt.Calls()
	require.Len(t, calls, 2)
	require.Equal(t, transport.OutcomeBrokenStub, calls[1].Outcome)
	before, trace := calls[1].Err, rt.Trace()

	var e1, eb *stub.Error
	require.ErrorAs(t, err1, &e1)
	e1.Msg = "changed by the caller"
	require.ErrorAs(t, broken, &eb)
	eb.Msg = "changed through Broken"

	assert.Equal(t, before, rt.Calls()[1].Err, "the broken-stub call's record changed with the caller's error")
	assert.Equal(t, trace, rt.Trace(), "the trace changed with the caller's error")
}

// KeepLast drops old slabs while a call whose record sits in one is still
// running, and records handed out for calls whose argument could not be
// copied stay empty among the others: Calls still holds the last n begun,
// in order, and the sink gets the long call's record complete.
func TestD2_KeepLastWithACallInFlightAndRefusedArguments(t *testing.T) {
	for _, keep := range []int{1, 3, 1000} {
		var sunk []runtime.CallRecord
		rt := newRuntime(t, runtime.WithRecords(runtime.KeepLast(keep)), runtime.WithRecordSink(func(c runtime.CallRecord) { sunk = append(sunk, c) }))
		xs := slowNS(rt, "X")
		const short = 2100
		run(t, rt, func(ctx context.Context) error {
			long, err := xs.GetByName("long")
			if err != nil {
				return err
			}
			s, err := xs.GetByName("x")
			if err != nil {
				return err
			}
			g := rt.Group(ctx)
			g.Go(func(ctx context.Context) error {
				v, err := stub.CallAs[int](ctx, long, "Slow", -1, time.Hour)
				if err == nil && v != -1 {
					t.Errorf("long call returned %d", v)
				}
				return err
			})
			g.Go(func(ctx context.Context) error {
				for i := range short {
					if i%300 == 3 { // refused before it begins: no record
						if _, err := s.Call(ctx, "Slow", tooDeep(), time.Duration(0)); err == nil {
							t.Error("an argument nested too deeply was copied")
						}
					}
					v, err := stub.CallAs[int](ctx, s, "Slow", i, time.Duration(0))
					if err != nil || v != i {
						t.Errorf("call %d: %v, %v", i, v, err)
					}
				}
				return nil
			})
			return g.Wait()
		})
		calls := rt.Calls()
		require.Equal(t, min(keep, short+1), len(calls), "KeepLast(%d)", keep)
		for i, c := range calls {
			want := short - len(calls) + i
			assert.Equal(t, want, c.Result, "KeepLast(%d): Calls()[%d]", keep, i)
			assert.Equal(t, []any{want, time.Duration(0)}, c.Args, "KeepLast(%d): Calls()[%d]", keep, i)
			if i > 0 {
				assert.Less(t, calls[i-1].Began, c.Began)
			}
		}
		require.Equal(t, short+1, len(sunk))
		last := sunk[len(sunk)-1]
		assert.Equal(t, "long", last.Object, "the long call ends last")
		assert.Equal(t, -1, last.Result)
		assert.Equal(t, transport.OutcomeOK, last.Outcome)
		assert.Equal(t, time.Hour, last.End-last.Start)
	}
}

type deep struct{ Next *deep }

// tooDeep is an argument the stub cannot copy (clone.MaxDepth).
func tooDeep() *deep {
	d := &deep{}
	for range 10000 {
		d = &deep{Next: d}
	}
	return d
}

// echoObj answers Echo(n, d) with n after sleeping d (retryable, so that
// retries run it again), and Nest(n, d) by calling Echo on a peer through
// a stub it keeps (shared by every turn of the object), and Hop(s, n, d)
// through a stub it is passed.
type echoObj struct {
	st   *object.State
	peer *stub.Stub
}

func (o *echoObj) Methods() object.Methods {
	return object.Methods{
		"Echo": object.Retryable(func(ctx context.Context, n int, d time.Duration) (int, error) {
			if d > 0 {
				if err := o.st.Sleep(ctx, d); err != nil {
					return 0, err
				}
			}
			return n, nil
		}),
		"Nest": object.Retryable(func(ctx context.Context, n int, d time.Duration) (int, error) {
			return stub.CallAs[int](ctx, o.peer, "Echo", n, d)
		}),
		"Hop": object.Retryable(func(ctx context.Context, s *stub.Stub, n int, d time.Duration) (int, error) {
			return stub.CallAs[int](ctx, s, "Echo", n, d)
		}),
	}
}

// sweepRun runs tasks that share stubs, with random faults and resets,
// and checks every answer against its question; it returns the trace.
func sweepRun(t *testing.T, seed uint64, plan *transport.FaultPlan, outcomes map[transport.Outcome]int) string {
	t.Helper()
	rt := runtime.New(runtime.WithSeed(seed), runtime.WithFaults(plan))
	defer rt.Close()
	var ns *runtime.Namespace
	ns = rt.Namespace("E", func(st *object.State) object.Object {
		o := &echoObj{st: st}
		if st.ID().Name() != "leaf" {
			o.peer, _ = ns.GetByName("leaf")
		}
		return o
	})
	bad := 0
	err := rt.Run(func(ctx context.Context) error {
		a, _ := ns.GetByName("a")
		leaf, _ := ns.GetByName("leaf")
		g := rt.Group(ctx)
		for w := range 4 {
			g.Go(func(ctx context.Context) error {
				for i := range 12 {
					n := w*100 + i
					d := time.Duration((n*7)%3) * 300 * time.Millisecond
					var v int
					var err error
					switch (n + int(seed)) % 4 {
					case 0:
						v, err = stub.CallAs[int](ctx, a, "Echo", n, d)
					case 1:
						v, err = stub.CallAs[int](ctx, a, "Nest", n, d)
					case 2:
						v, err = stub.CallAs[int](ctx, a, "Hop", leaf, n, d)
					default:
						v, err = stub.CallAs[int](ctx, leaf, "Echo", n, d)
					}
					if err == nil && v != n {
						bad++
						t.Errorf("seed %d: asked %d, got %d", seed, n, v)
					}
					if a.Broken() != nil {
						a, _ = ns.GetByName("a")
					}
					if leaf.Broken() != nil {
						leaf, _ = ns.GetByName("leaf")
					}
				}
				return nil
			})
		}
		g.Go(func(ctx context.Context) error { // resets while turns run
			for i := range 6 {
				if err := rt.Sleep(ctx, 450*time.Millisecond); err != nil {
					return err
				}
				id := "a"
				if i%2 == 1 {
					id = "leaf"
				}
				if err := ns.Reset(ns.IDFromName(id), transport.ResetCodeUpdate); err != nil {
					return err
				}
			}
			return nil
		})
		return g.Wait()
	})
	require.NoError(t, err, "seed %d", seed)
	for i, c := range rt.Calls() {
		outcomes[c.Outcome]++
		if c.Outcome == transport.OutcomePending || c.Ended == 0 {
			t.Errorf("seed %d: call %d (%s) never ended", seed, i, c.Method)
		}
		if (c.Outcome == transport.OutcomeOK || c.Outcome == transport.OutcomeRecovered) && len(c.Args) > 0 {
			want := c.Args[0]
			if c.Method == "Hop" {
				want = c.Args[1]
			}
			if c.Result != want {
				t.Errorf("seed %d: call %d (%s) recorded result %v for argument %v", seed, i, c.Method, c.Result, want)
			}
		}
	}
	return rt.Trace()
}

// Shared stubs, nested and reentrant inline turns, stub arguments,
// random faults and resets: every answer is its question's, every record
// ends, and a seed gives one trace.
func TestD1_SharedStubsFaultsAndResetsKeepAnswersAndTraces(t *testing.T) {
	plans := map[string]*transport.FaultPlan{
		"none": nil,
		"link": transport.Random(transport.Rates{transport.LoseResponse: 0.1, transport.LoseRequest: 0.05, transport.NotDelivered: 0.05,
			transport.LoseWhileRunning: 0.05, transport.FailAfterDelivery: 0.03, transport.Reset: 0.03}),
		"storage": transport.Random(transport.Rates{transport.LoseResponse: 0.1, transport.StorageWriteFails: 0.1}),
	}
	for name, plan := range plans {
		outcomes := map[transport.Outcome]int{}
		for seed := uint64(1); seed <= 15; seed++ {
			a := sweepRun(t, seed, plan, outcomes)
			b := sweepRun(t, seed, plan, map[transport.Outcome]int{})
			if a != b {
				t.Errorf("%s seed %d: two runs gave two traces", name, seed)
			}
		}
		t.Logf("%s: %v", name, outcomes)
		if plan != nil {
			assert.NotZero(t, outcomes[transport.OutcomeRecovered], "%s: no call was retried", name)
		}
	}
}

// echoHTTP answers a fetch with its body.
type echoHTTP struct{}

func (echoHTTP) Methods() object.Methods { return nil }

func (echoHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	_, _ = w.Write(b)
}

// Fetches through one stub, the first attempts of some not delivered
// (retried with a rewound body; a fetch is never retried after delivery,
// so no retry runs on a settled flight) and the frame reused: every
// response is its own request's body.
func TestS11_FetchesReuseTheFrame(t *testing.T) {
	rt := newRuntime(t, runtime.WithFaults(transport.Plan(
		transport.Rule{Method: "fetch", Call: 2, Attempt: 1, Fault: transport.NotDelivered},
		transport.Rule{Method: "fetch", Call: 4, Attempt: 1, Fault: transport.NotDelivered},
		transport.Rule{Method: "fetch", Call: 4, Attempt: 2, Fault: transport.NotDelivered},
	)))
	ns := rt.Namespace("H", func(*object.State) object.Object { return echoHTTP{} })
	s := mustStub(t, ns, "h")
	run(t, rt, func(ctx context.Context) error {
		for i := range 6 {
			body := fmt.Sprintf("body %d", i)
			req, err := http.NewRequest(http.MethodPost, "http://h/", strings.NewReader(body))
			if err != nil {
				return err
			}
			resp, err := s.Fetch(ctx, req)
			if err != nil {
				return fmt.Errorf("fetch %d: %w", i, err)
			}
			got, _ := io.ReadAll(resp.Body)
			if string(got) != body {
				t.Errorf("fetch %d: got %q, want %q", i, got, body)
			}
		}
		return nil
	})
	calls := rt.Calls()
	require.Len(t, calls, 6)
	assert.Equal(t, transport.OutcomeRecovered, calls[1].Outcome)
	assert.Len(t, calls[3].Attempts, 3)
	requireAllEnded(t, rt)
}
