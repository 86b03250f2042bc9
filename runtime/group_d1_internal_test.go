package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goer is what the workload below needs of a group.
type goer interface {
	Go(fn func(ctx context.Context) error)
	Wait() error
}

// goGroup is Group as it was before issue 14: one Kernel.Go per task,
// named as Spawn names them.
type goGroup struct {
	Group
}

func (g *goGroup) Go(fn func(ctx context.Context) error) {
	g.n++
	g.pending++
	k := g.r.k
	k.Go(g.ctx, fmt.Sprintf("group task %d", g.n), func(ctx context.Context) {
		err := runGuarded(ctx, fn)
		if err != nil && g.err == nil {
			g.err = err
		}
		g.pending--
		if g.pending == 0 && g.idle != nil {
			g.idle.Fire(k)
			g.idle = nil
		}
	})
}

// d1Echo answers Echo(n, d) after sleeping d, and Nest by asking leaf.
type d1Echo struct {
	st   *object.State
	leaf *stub.Stub
}

func (o *d1Echo) Methods() object.Methods {
	return object.Methods{
		"Echo": object.Retryable(func(ctx context.Context, n int, d time.Duration) (int, error) {
			return n, o.st.Sleep(ctx, d)
		}),
		"Nest": object.Retryable(func(ctx context.Context, n int, d time.Duration) (int, error) {
			return stub.CallAs[int](ctx, o.leaf, "Echo", n, d)
		}),
	}
}

// groupWorkload runs groups of 1, 3, 17 and 40 tasks, some nested, that
// make calls (retried under faults), sleep and time out, and returns the
// trace and how the calls ended.
func groupWorkload(t *testing.T, seed uint64, plan *transport.FaultPlan, spawn bool) string {
	rt := New(WithSeed(seed), WithFaults(plan))
	defer rt.Close()
	var ns *Namespace
	ns = rt.Namespace("E", func(st *object.State) object.Object {
		o := &d1Echo{st: st}
		if st.ID().Name() != "leaf" {
			o.leaf, _ = ns.GetByName("leaf")
		}
		return o
	})
	group := func(ctx context.Context) goer {
		if spawn {
			return rt.Group(ctx)
		}
		return &goGroup{Group: *rt.Group(ctx)}
	}
	var log []string
	err := rt.Run(func(ctx context.Context) error {
		a, _ := ns.GetByName("a")
		for wave, size := range []int{1, 3, 17, 40} {
			g := group(ctx)
			for i := range size {
				g.Go(func(ctx context.Context) error {
					n := wave*1000 + i
					d := time.Duration(n%3) * 100 * time.Millisecond
					switch n % 5 {
					case 0:
						if err := rt.Sleep(ctx, d); err != nil {
							return err
						}
					case 1: // a nested group
						inner := group(ctx)
						for j := range 1 + n%4 {
							inner.Go(func(ctx context.Context) error {
								v, err := stub.CallAs[int](ctx, a, "Echo", n*10+j, d)
								log = append(log, fmt.Sprintf("inner %d %d %v %v", n, j, v, err))
								return nil
							})
						}
						return inner.Wait()
					case 2: // a call that times out
						tctx, cancel := WithTimeout(ctx, 150*time.Millisecond)
						defer cancel()
						v, err := stub.CallAs[int](tctx, a, "Echo", n, 300*time.Millisecond)
						log = append(log, fmt.Sprintf("timed %d %v %v", n, v, err))
						return nil
					case 3:
						g.Go(func(ctx context.Context) error { // a task started by a task
							v, err := stub.CallAs[int](ctx, a, "Nest", n, d)
							log = append(log, fmt.Sprintf("late %d %v %v", n, v, err))
							return nil
						})
					}
					v, err := stub.CallAs[int](ctx, a, "Echo", n, d)
					log = append(log, fmt.Sprintf("call %d %v %v", n, v, err))
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("wave %d at %v", wave, rt.Elapsed()))
		}
		return nil
	})
	require.NoError(t, err)
	return fmt.Sprint(log) + "\n" + rt.Trace()
}

// D1, issue 14: Group started its tasks with Kernel.Go before and with
// Spawn now; with groups of several sizes, nested groups, tasks started
// by tasks, sleeps, timeouts and retries under faults, both give the same
// trace for a seed.
func TestD1_GroupBySpawnGivesTheTraceGroupByGoGave(t *testing.T) {
	plans := map[string]*transport.FaultPlan{
		"none": nil,
		"link": transport.Random(transport.Rates{transport.LoseResponse: 0.15, transport.LoseRequest: 0.1,
			transport.NotDelivered: 0.05, transport.LoseWhileRunning: 0.05}),
	}
	for name, plan := range plans {
		traces := map[string]bool{}
		for seed := uint64(1); seed <= 6; seed++ {
			withGo := groupWorkload(t, seed, plan, false)
			assert.Equal(t, withGo, groupWorkload(t, seed, plan, true), "%s seed %d", name, seed)
			traces[withGo] = true
		}
		assert.Greater(t, len(traces), 3, "%s: seeds give different traces, so the comparison can fail", name)
	}
}
