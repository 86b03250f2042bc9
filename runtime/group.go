package runtime

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/internal/sched"
)

// Group runs tasks concurrently, as errgroup does: Go starts one, Wait waits
// for all and returns the first error.
type Group struct {
	r       *Runtime
	ctx     context.Context
	pending int
	err     error
	idle    *sched.Signal
	n       int
	// fns holds the functions of the tasks not yet run: task number num
	// runs fns[num-base-1]. The kernel's events hold only the number
	// (sched.Runner), so that many tasks waiting to run hold little.
	fns  []func(ctx context.Context) error
	base int
}

// Group returns a group whose tasks run with ctx.
func (r *Runtime) Group(ctx context.Context) *Group {
	if ctx == nil {
		ctx = context.Background()
	}
	return &Group{r: r, ctx: ctx}
}

// Go starts fn as a new simulated task. A panic in fn becomes its error.
func (g *Group) Go(fn func(ctx context.Context) error) {
	g.n++
	g.pending++
	g.fns = append(g.fns, fn)
	g.r.k.Spawn((*groupRunner)(g), uint32(g.n))
}

// groupRunner runs a Group's tasks for the kernel (sched.Runner), without
// putting Runner's methods on Group.
type groupRunner Group

func (g *groupRunner) Context() (context.Context, string) { return g.ctx, "group task" }

// index returns where in fns task num's function is. Task numbers are
// kept in 32 bits (sched.Spawn), so the difference is taken in 32 bits.
func (g *groupRunner) index(num uint32) int { return int(num - uint32(g.base) - 1) }

func (g *groupRunner) Run(ctx context.Context, num uint32) {
	i := g.index(num)
	fn := g.fns[i]
	g.fns[i] = nil
	err := runGuarded(ctx, fn)
	if err != nil && g.err == nil {
		g.err = err
	}
	g.pending--
	if g.pending == 0 {
		g.fns = g.fns[:0] // every task has run: numbering goes on from g.n
		g.base = g.n
		if g.idle != nil {
			g.idle.Fire(g.r.k)
			g.idle = nil
		}
	}
}

func runGuarded(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("dosim: group task panicked: %v", p)
		}
	}()
	return fn(ctx)
}

// Wait waits for every task started with Go and returns the first error.
func (g *Group) Wait() error {
	k := g.r.k
	for g.pending > 0 {
		cur := k.Current()
		if cur == nil {
			return ErrNotInTask
		}
		if g.idle == nil {
			g.idle = &sched.Signal{}
		}
		if !g.idle.Wait(context.Background(), cur, fmt.Sprintf("waiting for %d group task(s)", g.pending)) && k.Closed() {
			return ErrClosed
		}
	}
	return g.err
}
