package sched

import (
	"context"
	"testing"
)

// descend calls itself n frames deep, each frame about 200 bytes, as a
// run's first call goes down through the stub, the link and the turn.
//
//go:noinline
func descend(n int) int {
	var pad [24]int
	pad[n%len(pad)] = n
	if n == 0 {
		return pad[0]
	}
	return descend(n-1) + pad[(n+1)%len(pad)]
}

// BenchmarkDeepStack is one kernel's life, as a sweep's seed has it: a
// kernel, its first task going 60 frames (about 12 KB) deep twice, the
// kernel closed; the first worker's stack grown at once (deep, deepStack)
// or by doublings (shallow).
func BenchmarkDeepStack(b *testing.B) {
	for _, way := range []string{"deep", "shallow"} {
		b.Run(way, func(b *testing.B) {
			shallowStacks.Store(way == "shallow")
			defer shallowStacks.Store(false)
			b.ReportAllocs()
			for i := range b.N {
				k := newKernel(uint64(i))
				k.Go(context.Background(), "root", func(context.Context) {
					descend(60)
					descend(60)
				})
				if _, err := k.Drive(-1); err != nil {
					b.Fatal(err)
				}
				if err := k.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
