// Package prefetch asks the processor to bring memory into its cache ahead
// of use, as a hint: it never faults, never changes what a program
// computes, and is a no-op where the architecture has no such instruction
// here. The scheduler uses it to fetch the next task's data while the
// current task runs (issue 14: 100,000 tasks picked in seeded order touch
// memory in no order a hardware prefetcher can follow). Its users are
// sched.Preparer, which names the tasks that come next, and runtime's
// groupRunner.Prepare, which fetches their functions.
//
// It is a speed trick that stays (issue 21), measured by alternating test
// binaries with and without it: with a million calls in flight
// (DOSIM_GROUP_SIZES=1000000 go test ./runtime -run '^$' -bench GroupCalls
// -benchtime 2x) a call takes about 950 ns with it and 1,235 without (+30%);
// at 100,000 it moves nothing (the tasks' data still fits the caches).
// Measure it again when the scheduler's event heap or tasks change, and
// remove it when the figure at a million no longer moves by 10%.
package prefetch
