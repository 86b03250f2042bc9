package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newRuntime makes a runtime closed at the end of the test.
func newRuntime(t *testing.T, opts ...runtime.Option) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(append([]runtime.Option{runtime.WithLogger(zaptest.NewLogger(t))}, opts...)...)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	return rt
}

// run runs fn in rt and fails the test on error, printing the seed.
func run(t *testing.T, rt *runtime.Runtime, fn func(ctx context.Context) error) {
	t.Helper()
	require.NoError(t, rt.Run(fn), "seed %d", rt.Seed())
}

// mustStub returns a stub for name in ns.
func mustStub(t *testing.T, ns *runtime.Namespace, name string, opts ...stub.Option) *stub.Stub {
	t.Helper()
	s, err := ns.GetByName(name, opts...)
	require.NoError(t, err)
	return s
}

func TestIDsO1(t *testing.T) {
	rt := newRuntime(t)
	inv := rt.Namespace("INVENTORY", examples.NewInventory)
	other := rt.Namespace("OTHER", examples.NewInventory)

	a1, a2 := inv.IDFromName("apple"), inv.IDFromName("apple")
	assert.True(t, a1.Equal(a2), "IDFromName is deterministic")
	assert.Len(t, a1.String(), 64)
	assert.Regexp(t, "^[0-9a-f]{64}$", a1.String())
	assert.Equal(t, "apple", a1.Name())
	assert.False(t, a1.Equal(inv.IDFromName("pear")))
	assert.False(t, a1.Equal(other.IDFromName("apple")), "the same name in another namespace is another object")

	// Deterministic across runtimes too: the id depends on namespace and name only.
	rt2 := newRuntime(t)
	assert.Equal(t, a1.String(), rt2.Namespace("INVENTORY", examples.NewInventory).IDFromName("apple").String())

	seen := map[string]bool{}
	for range 1000 {
		u := inv.NewUniqueID()
		require.False(t, seen[u.String()], "NewUniqueID never repeats")
		seen[u.String()] = true
		assert.Empty(t, u.Name())
	}

	back, err := inv.IDFromString(a1.String())
	require.NoError(t, err)
	assert.True(t, back.Equal(a1))
	assert.Equal(t, "apple", back.Name(), "a named id keeps its name through IDFromString")

	_, err = inv.IDFromString(other.IDFromName("apple").String())
	require.ErrorIs(t, err, runtime.ErrID)
	assert.Contains(t, err.Error(), `belongs to namespace "OTHER", not "INVENTORY"`)

	_, err = inv.IDFromString("not-hex")
	require.ErrorIs(t, err, runtime.ErrID)
	assert.Contains(t, err.Error(), "want 64 hex digits")

	_, err = inv.IDFromString(strings.Repeat("ab", 32))
	require.ErrorIs(t, err, runtime.ErrID)
	assert.Contains(t, err.Error(), "not an id dosim produced")
}

func TestNewUniqueIDIsSeeded(t *testing.T) {
	ids := func(seed uint64) string {
		rt := newRuntime(t, runtime.WithSeed(seed))
		ns := rt.Namespace("N", examples.NewInventory)
		return ns.NewUniqueID().String() + ns.NewUniqueID().String()
	}
	assert.Equal(t, ids(5), ids(5))
	assert.NotEqual(t, ids(5), ids(6))
}

// counting counts constructions, to check rule O2.
type counting struct {
	st     *object.State
	built  *int
	fields int
}

func (c *counting) Methods() object.Methods {
	return object.Methods{
		"Bump": object.Func(func(ctx context.Context) (int, error) { c.fields++; return c.fields, nil }),
	}
}

func TestLazyConstructionOneInstanceO2(t *testing.T) {
	rt := newRuntime(t)
	built := 0
	ns := rt.Namespace("C", func(st *object.State) object.Object { built++; return &counting{st: st, built: &built} })
	s := mustStub(t, ns, "a")
	assert.Equal(t, 0, built, "getting a stub does not build the object")
	assert.Nil(t, ns.Instance(ns.IDFromName("a")))
	run(t, rt, func(ctx context.Context) error {
		g := rt.Group(ctx)
		for range 10 {
			g.Go(func(ctx context.Context) error { _, err := s.Call(ctx, "Bump"); return err })
		}
		return g.Wait()
	})
	assert.Equal(t, 1, built, "one instance per id, built on first delivery")
	assert.Equal(t, 10, ns.Instance(ns.IDFromName("a")).(*counting).fields, "every call reached the same instance")
}

// slowCounter reads, sleeps, then writes: it yields in the middle, so
// concurrent calls interleave there (rule O3 allows it at a sleep).
type slowCounter struct{ st *object.State }

func (c *slowCounter) Methods() object.Methods {
	return object.Methods{
		"AddSlow": object.Func(func(ctx context.Context) error {
			var n int
			if _, err := c.st.Storage().Get(ctx, "n", &n); err != nil {
				return err
			}
			if err := c.st.Sleep(ctx, time.Millisecond); err != nil {
				return err
			}
			return c.st.Storage().Put(ctx, "n", n+1)
		}),
		"Get": object.Func(func(ctx context.Context) (int, error) {
			var n int
			_, err := c.st.Storage().Get(ctx, "n", &n)
			return n, err
		}),
	}
}

func TestInputGateO3(t *testing.T) {
	t.Run("no update lost without a yield", func(t *testing.T) {
		rt := newRuntime(t, runtime.WithSeed(9))
		ns := rt.Namespace("INVENTORY", examples.NewInventory)
		s := mustStub(t, ns, "shop")
		var got int
		run(t, rt, func(ctx context.Context) error {
			g := rt.Group(ctx)
			for range 50 {
				g.Go(func(ctx context.Context) error { _, err := s.Call(ctx, "AddOne", "apple"); return err })
			}
			if err := g.Wait(); err != nil {
				return err
			}
			var err error
			got, err = stub.CallAs[int](ctx, s, "Get", "apple")
			return err
		})
		assert.Equal(t, 50, got, "50 concurrent read-modify-write calls lose no update")
	})
	t.Run("a sleep lets other requests in", func(t *testing.T) {
		rt := newRuntime(t, runtime.WithSeed(9))
		ns := rt.Namespace("SLOW", func(st *object.State) object.Object { return &slowCounter{st: st} })
		s := mustStub(t, ns, "c")
		var got int
		run(t, rt, func(ctx context.Context) error {
			g := rt.Group(ctx)
			for range 5 {
				g.Go(func(ctx context.Context) error { _, err := s.Call(ctx, "AddSlow"); return err })
			}
			if err := g.Wait(); err != nil {
				return err
			}
			var err error
			got, err = stub.CallAs[int](ctx, s, "Get")
			return err
		})
		assert.Less(t, got, 5, "the gate opens during a sleep, so the read-sleep-write calls overlap")
	})
}

// holder returns and receives values that share memory, to check rule O5.
type holder struct {
	st   *object.State
	kept map[string][]int
}

func (h *holder) Methods() object.Methods {
	return object.Methods{
		"Keep": object.Func(func(ctx context.Context, m map[string][]int) error { h.kept = m; return nil }),
		"Kept": object.Func(func(ctx context.Context) (map[string][]int, error) { return h.kept, nil }),
	}
}

func TestArgumentsAndResultsAreCopiesO5(t *testing.T) {
	rt := newRuntime(t)
	ns := rt.Namespace("H", func(st *object.State) object.Object { return &holder{st: st} })
	s := mustStub(t, ns, "h")
	run(t, rt, func(ctx context.Context) error {
		arg := map[string][]int{"a": {1, 2}}
		if _, err := s.Call(ctx, "Keep", arg); err != nil {
			return err
		}
		arg["a"][0] = 99 // the caller changes its value after the call
		arg["b"] = []int{3}
		got, err := stub.CallAs[map[string][]int](ctx, s, "Kept")
		if err != nil {
			return err
		}
		assert.Equal(t, map[string][]int{"a": {1, 2}}, got, "the object kept a copy, not the caller's map")
		got["a"][1] = 42 // and the caller's copy of the result is its own
		again, err := stub.CallAs[map[string][]int](ctx, s, "Kept")
		assert.Equal(t, map[string][]int{"a": {1, 2}}, again)
		return err
	})
}

// demo runs a small concurrent program with a fault and returns its trace.
func demo(t *testing.T, seed uint64) string {
	plan := transport.Plan(
		transport.Rule{Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse},
		transport.Rule{Method: "SetQuantity", Attempt: 1, Fault: transport.LoseRequest},
	)
	rt := newRuntime(t, runtime.WithSeed(seed), runtime.WithFaults(plan))
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	run(t, rt, func(ctx context.Context) error {
		g := rt.Group(ctx)
		for i := range 4 {
			g.Go(func(ctx context.Context) error {
				s, err := ns.GetByName(fmt.Sprint("shop-", i%2))
				if err != nil {
					return err
				}
				_, _ = s.Call(ctx, "SetQuantity", "apple", i)
				_, _ = s.Call(ctx, "AddOne", "apple")
				// A failure above broke s (L2): read through a fresh stub.
				if s, err = ns.GetByName(fmt.Sprint("shop-", i%2)); err != nil {
					return err
				}
				_, err = s.Call(ctx, "Get", "apple")
				return err
			})
		}
		return g.Wait()
	})
	return rt.Trace()
}

// D1 and the determinism self-test: one seed, run twice, gives one trace.
func TestSameSeedSameTraceD1(t *testing.T) {
	first := demo(t, 7)
	require.NotEmpty(t, first)
	assert.Equal(t, first, demo(t, 7), "same seed, same trace, byte for byte")
	assert.NotEqual(t, first, demo(t, 8), "another seed draws other identities and interleavings")
}

// D1 over many seeds: each seed replays exactly.
func TestDeterminismSweepD1(t *testing.T) {
	for seed := range uint64(25) {
		assert.Equal(t, demo(t, seed), demo(t, seed), "seed %d", seed)
	}
}

func TestCallRecordShapeD2(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Get", Delay: 3 * time.Second})
	rt := newRuntime(t, runtime.WithFaults(plan))
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	s := mustStub(t, ns, "apple")
	run(t, rt, func(ctx context.Context) error {
		if err := rt.Sleep(ctx, time.Second); err != nil {
			return err
		}
		_, err := s.Call(ctx, "Get", "apple")
		return err
	})
	calls := rt.Calls()
	require.Len(t, calls, 1)
	c := calls[0]
	assert.Regexp(t, "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", c.RequestID, "a version 4 uuid")
	assert.Equal(t, "INVENTORY", c.Namespace)
	assert.Equal(t, "apple", c.Object)
	assert.Equal(t, "Get", c.Method)
	assert.Equal(t, time.Second, c.Start, "times are virtual time since the runtime started")
	assert.Equal(t, 4*time.Second, c.End, "the link's delay is virtual latency")
	assert.Equal(t, 1, c.Subrequests)
	assert.Equal(t, transport.OutcomeOK, c.Outcome)
	assert.Empty(t, c.Err)
	require.Len(t, c.Attempts, 1)
	a := c.Attempts[0]
	assert.Equal(t, runtime.AttemptRecord{N: 1, RequestID: c.RequestID, Start: time.Second, End: 4 * time.Second,
		Fault: transport.None, Delivered: true, Executed: true}, a)
	assert.Equal(t, runtime.Epoch.Add(4*time.Second), rt.Now())
}

// sleeper runs for a while after its link breaks.
type sleeper struct{ st *object.State }

func (s *sleeper) Methods() object.Methods {
	return object.Methods{
		"Work": object.Func(func(ctx context.Context) error { return s.st.Sleep(ctx, 30*time.Second) }),
	}
}

// D3: the first attempt keeps running after its call failed, and its
// record reaches the end of that execution.
func TestFirstAttemptRecordedToItsEndD3(t *testing.T) {
	plan := transport.Plan(transport.Rule{Method: "Work", Attempt: 1, Fault: transport.LoseWhileRunning})
	rt := newRuntime(t, runtime.WithFaults(plan))
	ns := rt.Namespace("S", func(st *object.State) object.Object { return &sleeper{st: st} })
	s := mustStub(t, ns, "s")
	var callErr error
	run(t, rt, func(ctx context.Context) error {
		_, callErr = s.Call(ctx, "Work")
		return nil
	})
	require.Error(t, callErr)
	c := rt.Calls()[0]
	assert.Equal(t, transport.OutcomeDuplicateRejected, c.Outcome)
	assert.Less(t, c.End, 30*time.Second, "the call failed long before the method finished")
	first := c.Attempts[0]
	assert.True(t, first.Executed)
	assert.Equal(t, 30*time.Second, first.End, "attempt 1 is recorded to the end of its execution")
}

func TestFetchServesHTTPHandlers(t *testing.T) {
	rt := newRuntime(t)
	ns := rt.Namespace("WEB", func(st *object.State) object.Object { return &web{st: st} })
	s := mustStub(t, ns, "site")
	run(t, rt, func(ctx context.Context) error {
		req, err := http.NewRequest(http.MethodPost, "http://do/echo", strings.NewReader("hello"))
		if err != nil {
			return err
		}
		resp, err := s.Fetch(ctx, req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusTeapot, resp.StatusCode)
		assert.Equal(t, "echo: hello", string(body))
		return nil
	})
	c := rt.Calls()[0]
	assert.Equal(t, "fetch", c.Method)
	assert.Equal(t, transport.OutcomeOK, c.Outcome)
}

type web struct{ st *object.State }

func (w *web) Methods() object.Methods { return object.Methods{} }

func (w *web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rw.WriteHeader(http.StatusTeapot)
	fmt.Fprintf(rw, "echo: %s", b)
}

var _ http.Handler = (*web)(nil)

func TestAdvanceRunsWhatFallsDue(t *testing.T) {
	rt := newRuntime(t)
	require.NoError(t, rt.Advance(90*time.Second))
	assert.Equal(t, runtime.Epoch.Add(90*time.Second), rt.Now())
	assert.Equal(t, 90*time.Second, rt.Elapsed())
	start := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	rt2 := newRuntime(t, runtime.WithStart(start))
	assert.Equal(t, start, rt2.Now())
	assert.Error(t, rt.Advance(-time.Second))
}

func TestGroupReturnsFirstErrorAndPanics(t *testing.T) {
	rt := newRuntime(t)
	var err error
	run(t, rt, func(ctx context.Context) error {
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error { _ = rt.Sleep(ctx, time.Second); return errors.New("late") })
		g.Go(func(ctx context.Context) error { return errors.New("early") })
		g.Go(func(ctx context.Context) error { return nil })
		err = g.Wait()
		return nil
	})
	assert.EqualError(t, err, "early")

	run(t, rt, func(ctx context.Context) error {
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error { panic("kaboom") })
		err = g.Wait()
		return nil
	})
	assert.ErrorContains(t, err, "kaboom")
}

// Issue 14: a Group keeps its tasks' functions until they run and the
// kernel only their numbers. Every function runs once, with the context
// the Group was made with, across Waits and with tasks started by tasks;
// numbering goes on across Waits, as deadlock reports show.
func TestGroupRunsEachTaskOnceAcrossWaits(t *testing.T) {
	rt := newRuntime(t)
	type key struct{}
	ran := map[string]int{}
	err := rt.Run(func(ctx context.Context) error {
		g := rt.Group(context.WithValue(ctx, key{}, "group"))
		task := func(name string) func(ctx context.Context) error {
			return func(ctx context.Context) error {
				if ctx.Value(key{}) != "group" {
					return fmt.Errorf("%s ran without the group's context", name)
				}
				ran[name]++
				return nil
			}
		}
		for i := range 3 {
			g.Go(task(fmt.Sprint("first ", i)))
		}
		if err := g.Wait(); err != nil {
			return err
		}
		g.Go(func(ctx context.Context) error {
			g.Go(task("started by a task")) // while this one still runs
			return task("second 0")(ctx)
		})
		g.Go(task("second 1"))
		if err := g.Wait(); err != nil {
			return err
		}
		g.Go(func(ctx context.Context) error { return g.Wait() }) // task 7 waits for itself
		return g.Wait()
	})
	var dl *runtime.DeadlockError
	require.ErrorAs(t, err, &dl)
	assert.Equal(t, []string{"root: waiting for 1 group task(s)", "group task 7: waiting for 1 group task(s)"}, dl.Blocked)
	assert.Equal(t, map[string]int{"first 0": 1, "first 1": 1, "first 2": 1, "second 0": 1, "second 1": 1, "started by a task": 1}, ran)
}

// Issue 14: a Group keeps its tasks' functions until they run, and its
// numbering moves on once every task has run. A wave of 5,000 tasks, then
// a small one that reuses the list, each run every function exactly once.
func TestGroupRunsEveryTaskOfALargeWaveThenASmallOne(t *testing.T) {
	rt := newRuntime(t)
	counts := make([]int, 5_010)
	err := rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		for _, wave := range [][2]int{{0, 5_000}, {5_000, 5_010}} {
			for i := wave[0]; i < wave[1]; i++ {
				g.Go(func(ctx context.Context) error { counts[i]++; return nil })
			}
			if err := g.Wait(); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	for i, n := range counts {
		if n != 1 {
			t.Fatalf("task %d ran %d times", i, n)
		}
	}
}

func TestDeadlockIsReportedNotHung(t *testing.T) {
	rt := newRuntime(t)
	err := rt.Run(func(ctx context.Context) error {
		g := rt.Group(ctx)
		g.Go(func(ctx context.Context) error { return g.Wait() }) // waits for itself
		return g.Wait()
	})
	var dl *runtime.DeadlockError
	require.ErrorAs(t, err, &dl)
	assert.Equal(t, []string{"root: waiting for 1 group task(s)", "group task 1: waiting for 1 group task(s)"}, dl.Blocked)
	assert.Contains(t, err.Error(), "every task is blocked and no timer is pending")
}

// A fault rule may name an object by its 64-hex-digit id as well as by its
// name; the id is only made for plans that name objects.
func TestFaultRuleNamesAnObjectByItsID(t *testing.T) {
	probe := runtime.New()
	id := probe.Namespace("INVENTORY", examples.NewInventory).IDFromName("shop")
	probe.Close()
	plan := transport.Plan(transport.Rule{Object: id.String(), Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse})
	require.True(t, plan.NamesObjects())
	assert.False(t, transport.Plan(transport.Rule{Method: "AddOne"}).NamesObjects())
	rt := runtime.New(runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	require.NoError(t, rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("shop")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "AddOne", "apple") // ambiguous: the reply was lost
		assert.Error(t, err)
		return nil
	}))
	c := rt.Calls()[0]
	require.Len(t, c.Attempts, 2)
	assert.Equal(t, transport.LoseResponse, c.Attempts[0].Fault, "the rule named the object by its id")
}
