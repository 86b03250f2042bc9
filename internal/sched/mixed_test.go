package sched

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mixedWorld is a program of tasks that sleep, wait on signals with
// timeouts, fire them, take a gate and yield it, schedule callbacks that
// start tasks, Background callbacks, and cancel one of the two contexts
// the tasks run with. With spawn set, two tasks of three are started with
// Spawn, on two Runners that take turns; otherwise all with Go.
type mixedWorld struct {
	t      *testing.T
	k      *Kernel
	spawn  bool
	order  []string
	sigs   [4]*Signal
	gate   Gate
	ctxs   [2]context.Context
	cancel context.CancelFunc
	rs     [2]*funcRunner
	next   uint32
}

func (w *mixedWorld) log(format string, args ...any) {
	w.order = append(w.order, fmt.Sprintf(format, args...)+fmt.Sprintf("@%v", w.k.Now()))
}

// start starts task i, by Spawn or by Go.
func (w *mixedWorld) start(i uint32) {
	if w.spawn && i%3 != 0 {
		w.k.Spawn(w.rs[i%2], i)
		return
	}
	w.k.Go(w.ctxs[i%2], "go", func(ctx context.Context) { w.body(ctx, i) })
}

func (w *mixedWorld) startNext() {
	if w.next < 150 {
		w.next++
		w.start(w.next)
	}
}

func (w *mixedWorld) body(ctx context.Context, i uint32) {
	k := w.k
	t := FromContext(ctx)
	require.Same(w.t, k.Current(), t)
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	w.log("%d start", i)
	checkRefs(w.t, k)
	for range 1 + rng.IntN(4) {
		switch op := rng.IntN(9); op {
		case 0:
			err := t.Sleep(ctx, time.Duration(rng.IntN(3))*time.Millisecond)
			w.log("%d slept %v", i, err)
		case 1:
			s := w.sigs[rng.IntN(4)]
			ok := s.WaitFor(ctx, t, "signal", time.Duration(rng.IntN(4))*time.Millisecond)
			w.log("%d waited %v %v", i, ok, ctx.Err())
		case 2:
			j := rng.IntN(4)
			w.sigs[j].Fire(k)
			w.sigs[j] = &Signal{}
			w.log("%d fired %d", i, j)
		case 3:
			w.gate.Acquire(t, "gate")
			t.SetWork(&gateWork{name: "gate", g: &w.gate})
			err := t.Sleep(ctx, time.Millisecond)
			t.SetWork(nil)
			w.gate.Release()
			w.log("%d gate %v", i, err)
		case 4:
			d := time.Duration(rng.IntN(3)) * time.Millisecond
			cb := func() {
				w.log("%d callback", i)
				w.startNext()
			}
			if rng.IntN(2) == 0 { // keeps the run going
				k.After(d, cb)
			} else {
				k.Alarm(d, cb)
			}
		case 5:
			k.Background(time.Duration(rng.IntN(3))*time.Millisecond, func() {
				w.log("%d background", i)
				checkRefs(w.t, k)
			})
		case 6, 7:
			w.startNext()
		case 8:
			if i > 40 {
				w.cancel()
				w.log("%d cancelled", i)
			}
		}
	}
	w.log("%d end", i)
}

func mixedRun(t *testing.T, seed uint64, spawn bool) string {
	k := newKernel(seed)
	defer k.Close()
	w := &mixedWorld{t: t, k: k, spawn: spawn}
	for i := range w.sigs {
		w.sigs[i] = &Signal{}
	}
	w.ctxs[0], w.cancel = context.WithCancel(context.Background())
	w.ctxs[1] = context.Background()
	for j := range w.rs {
		w.rs[j] = &funcRunner{name: "spawned", ctx: w.ctxs[j], fn: w.body}
	}
	run(t, k, func(ctx context.Context) {
		for range 20 {
			w.startNext()
		}
		require.NoError(t, FromContext(ctx).Sleep(ctx, 2*time.Millisecond))
		for range 10 {
			w.startNext()
		}
	})
	require.Zero(t, k.alive, "every task ended")
	checkRefs(t, k)
	return strings.Join(w.order, "\n")
}

// D1, issue 14: with sleeps, signal waits with timeouts, a gate yielded
// across sleeps, callbacks (kept-alive and Background) that start tasks,
// tasks that start tasks and a cancelled context, tasks started by Spawn
// on two Runners taking turns run in the order Go would give them, and a
// Task reused from an ended task is never woken by its previous life.
func TestD1_SpawnMixedWithTimersSignalsGatesAndCancelsRunsAsGoWould(t *testing.T) {
	orders := map[string]bool{}
	for seed := range uint64(30) {
		withGo := mixedRun(t, seed, false)
		withSpawn := mixedRun(t, seed, true)
		if withGo != withSpawn {
			a, b := strings.Split(withGo, "\n"), strings.Split(withSpawn, "\n")
			for i := range min(len(a), len(b)) {
				if a[i] != b[i] {
					t.Fatalf("seed %d: line %d: Go %q, Spawn %q", seed, i, a[i], b[i])
				}
			}
			t.Fatalf("seed %d: lengths %d and %d", seed, len(a), len(b))
		}
		require.Equal(t, withSpawn, mixedRun(t, seed, true), "seed %d: same seed, same order", seed)
		orders[withGo] = true
	}
	assert.Greater(t, len(orders), 20, "the seeds give different orders, so the comparison can fail")
}

// checkRefs checks the kernel's slots against its heap: each slot counts
// the events that point at it (Background events time never reached and
// stale timers are left), and the free list holds exactly the others.
func checkRefs(t *testing.T, k *Kernel) {
	t.Helper()
	n := make([]int, len(k.refs))
	for _, e := range k.events {
		if e.kind != evTarget {
			n[e.ref]++
		}
	}
	free := map[uint32]bool{}
	for _, i := range k.free {
		require.False(t, free[i], "slot %d is free twice", i)
		free[i] = true
	}
	for i, r := range k.refs {
		require.Equal(t, n[i], r.n, "slot %d", i)
		require.Equal(t, r.n == 0, free[uint32(i)], "slot %d (%d events) is free", i, r.n)
		require.Equal(t, r.n == 0, r.p == nil, "slot %d", i)
	}
}
