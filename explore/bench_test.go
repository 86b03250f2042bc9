package explore_test

import (
	"fmt"
	"testing"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
)

// BenchmarkExploreSeed is one seed of ambiguous-delivery.yaml with every
// check (invariants, expectations, linearizability), on one worker and on
// two. It reports seeds/s; the model's memo is warm after the first seeds,
// as in any sweep.
func BenchmarkExploreSeed(b *testing.B) {
	sc := load(b, "ambiguous-delivery")
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			sum, err := explore.Run(sc, explore.Options{Seeds: b.N, Workers: workers, Strategy: "random"})
			if err != nil {
				b.Fatal(err)
			}
			if !sum.Clean() {
				b.Fatalf("violations: %v", sum.Violations)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
		})
	}
}

// BenchmarkFuncSeed is one seed of a function's sweep (explore.RunFunc,
// what dosimtest.Func runs) on a one-object,
// three-call function (a wallet's two deposits and a read), with every
// check, on one worker; compare its seeds/s with BenchmarkExploreSeed's.
func BenchmarkFuncSeed(b *testing.B) {
	b.ReportAllocs()
	sum, err := explore.RunFunc(explore.Options{Seeds: b.N}, walletFunc)
	if err != nil || !sum.Clean() {
		b.Fatal("violations")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
}

// BenchmarkTimeToFind runs each strategy on each zoo bug (examples/zoo)
// and reports the seeds run up to the first failing one (for an
// exhaustive search, the runs of its tree: metric runs) and the CPU time
// they took, on one worker, at most 10,000 seeds: a strategy that finds
// nothing reports found=0 and the seeds and time it spent; one that does
// not apply (an exhaustive search of a bug whose rates draw no fault) is
// skipped. docs/explore.md's table (section "Finding bugs") is TestZoo_Table's
// output.
func BenchmarkTimeToFind(b *testing.B) {
	for _, bug := range zoo.Bugs() {
		for _, s := range strategies {
			b.Run(bug.Name+"/"+s.name, func(b *testing.B) {
				if s.exhaustive() && !exhaustiveApplies(bug) {
					b.Skipf("%s draws no fault: an exhaustive search has no kind to place", bug.Name)
				}
				var f found
				for b.Loop() {
					f = timeToFind(b, bug, s, 10000)
				}
				unit := "seeds"
				if s.exhaustive() {
					unit = "runs"
				}
				b.ReportMetric(float64(f.seeds), unit)
				b.ReportMetric(float64(f.cpu.Microseconds())/1000, "cpu-ms")
				ok := 0.0
				if f.ok {
					ok = 1
				}
				b.ReportMetric(ok, "found")
			})
		}
	}
}
