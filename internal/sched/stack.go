package sched

import "sync/atomic"

// deepStack is a speed trick, kept behind this one type: the first
// deepWorkers worker goroutines a kernel starts grow their stacks to
// deepStack's size at once, while each holds two frames. The first runs
// the kernel's first task (the runtime's Run function: every call a run
// makes from its top level, down through the link, the object's turn and
// the checks); the next, in a seed, mostly turns run as tasks of their
// own (a retry's, which the link delays, a call the caller does not wait
// for, an alarm's, a queue's). A new goroutine starts with a small stack,
// and a run's first call grew it by doublings, each copying the stack and
// adjusting every frame on it, deep in the call; a sweep starts a kernel
// per seed and per replay the checker makes, and paid for that on each
// (13% of explore's BenchmarkExploreSeed's CPU profile, in
// runtime.newstack; 5% with the first worker's alone, 2.5% with two).
// Later workers (a Group's spawned tasks) start small, as 100,000 of them
// may be parked at once.
//
// The benchmarks that justify it are explore's BenchmarkExploreSeed,
// BenchmarkScenarioSeed/booth and BenchmarkDeepStack (a kernel per op,
// its first task's calls as deep as a seed's). Measured alternating the
// test binaries on a shared two-core machine (busy: load 9 to 19),
// BenchmarkExploreSeed on one worker took a median of 26.6 to 28.9 µs of
// CPU time a seed with the first worker's alone, 30.3 to 33.6 without; 8
// KB and 32 KB did no better than 16 KB. Booth, an SQL object with an
// alarm and a queue, starts a third worker in 79% of its seeds and a
// fourth in 18% (a kernel's started workers, counted over 1,000 seeds);
// with four deep workers rather than two, BenchmarkScenarioSeed/booth at
// two workers took 0.94 and 0.95 of the CPU time (medians of eight
// alternated pairs, 2,000 seeds each; eight deep workers did the same,
// and eight at 32 KB no better: 0.96).
type deepStack [16 << 10]byte

// deepWorkers is how many of a kernel's first worker goroutines grow
// their stacks at once (deepStack).
const deepWorkers = 4

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
