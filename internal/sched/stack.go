package sched

import "sync/atomic"

// deepStack is a speed trick, kept behind this one type: the first worker
// goroutine a kernel starts, which runs its first task (the runtime's Run
// function: every call a run makes from its top level, down through the
// link, the object's turn and the checks), grows its stack to deepStack's
// size at once, while the stack holds two frames. A new goroutine starts
// with a small stack, and a run's first call grew it by doublings, each
// copying the stack and adjusting every frame on it, deep in the call;
// a sweep starts a kernel per seed, and paid for that on every seed (13%
// of explore's BenchmarkExploreSeed's CPU profile, in runtime.newstack).
// Later workers (turns run as tasks of their own, a Group's spawned tasks)
// start small, as 100,000 of them may be parked at once.
//
// The benchmarks that justify it are explore's BenchmarkExploreSeed and
// BenchmarkDeepStack (a kernel per op, its first task's calls as deep as
// a seed's). Measured alternating the test binaries 6 times on a shared
// two-core machine (busy: load 9 to 11), BenchmarkExploreSeed on one
// worker took a median of 26.6 µs of CPU time a seed with it and 30.3
// without; 8 KB and 32 KB did no better than 16 KB.
type deepStack [16 << 10]byte

// shallowStacks turns deepStack off (BenchmarkDeepStack).
var shallowStacks atomic.Bool

// deepLoop grows the goroutine's stack (deepStack), then runs loop.
func (w *worker) deepLoop() {
	reserve(0)
	w.loop()
}

// reserve has a deepStack in its frame: calling it grows the stack to
// hold one. It reads and writes the array so that the compiler keeps it.
//
//go:noinline
func reserve(i int) byte {
	var buf deepStack
	buf[i] = 1
	return buf[len(buf)-1-i]
}
