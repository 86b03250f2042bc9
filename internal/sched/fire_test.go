package sched

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fireOrder runs six tasks that wait on signals fired by timers of the
// same few instants, the timers set by After (a callback that fires the
// signal) or by FireAfter, under the seeded tie-break or PCT, and returns
// the order the tasks woke in, with the kernel's draws after.
func fireOrder(t *testing.T, seed uint64, fire, pct bool) string {
	t.Helper()
	k := newKernel(seed)
	defer k.Close()
	if pct {
		require.NoError(t, k.SetPCT(3, 40))
	}
	var order []string
	run(t, k, func(ctx context.Context) {
		for i := range 6 {
			s := new(Signal)
			d := time.Duration(i%2) * time.Millisecond
			if fire {
				k.FireAfter(d, s)
			} else {
				k.After(d, func() { s.Fire(k) })
			}
			k.Go(ctx, fmt.Sprint(i), func(ctx context.Context) {
				s.Wait(ctx, FromContext(ctx), "waiting")
				order = append(order, fmt.Sprintf("%d@%s", i, k.Now()))
			})
		}
	})
	return strings.Join(order, ",") + fmt.Sprintf(" next draw %d", k.Rand().Uint64())
}

// D1: FireAfter is After with a callback that fires the signal: for every
// seed, the same wake order and the same seeded stream after, under the
// seeded tie-break and under PCT.
func TestD1_FireAfterIsAfterThatFires(t *testing.T) {
	orders := map[string]bool{}
	for _, pct := range []bool{false, true} {
		for seed := range uint64(50) {
			want := fireOrder(t, seed, false, pct)
			require.Equal(t, want, fireOrder(t, seed, true, pct), "seed %d pct %v", seed, pct)
			orders[want] = true
		}
	}
	require.Greater(t, len(orders), 10, "the seeds order the ties differently")
}

// BenchmarkFireAfter is one reply's latency as the runtime's host.reply
// waits it (a signal fired after a delay, its waiter woken): by FireAfter,
// or by After with a callback that fires the signal.
func BenchmarkFireAfter(b *testing.B) {
	for _, way := range []string{"FireAfter", "After"} {
		b.Run(way, func(b *testing.B) {
			k := newKernel(1)
			defer k.Close()
			b.ReportAllocs()
			k.Go(context.Background(), "root", func(ctx context.Context) {
				t := FromContext(ctx)
				for range b.N {
					s := new(Signal)
					if way == "FireAfter" {
						k.FireAfter(time.Millisecond, s)
					} else {
						k.After(time.Millisecond, func() { s.Fire(k) })
					}
					s.Wait(ctx, t, "waiting for a reply")
				}
			})
			if _, err := k.Drive(-1); err != nil {
				b.Fatal(err)
			}
		})
	}
}
