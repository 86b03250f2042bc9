package explore_test

import (
	"fmt"
	"testing"

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
			sum, err := explore.Run(sc, explore.Options{Seeds: b.N, Workers: workers})
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
