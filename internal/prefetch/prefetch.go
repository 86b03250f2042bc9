// Package prefetch asks the processor to bring memory into its cache ahead
// of use, as a hint: it never faults, never changes what a program
// computes, and is a no-op where the architecture has no such instruction
// here. The scheduler uses it to fetch the next task's data while the
// current task runs (issue 14: 100,000 tasks picked in seeded order touch
// memory in no order a hardware prefetcher can follow).
package prefetch
