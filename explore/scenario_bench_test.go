package explore_test

import (
	"runtime"
	"testing"

	"github.com/dosim/dosim/explore"
)

// BenchmarkScenarioSeed is one seed of each scenario of issue 35's table,
// under the default strategy with every check on, on one worker: what a
// user's sweep costs a seed. It reports seeds/s and the bytes allocated
// per seed (B/op is per seed: one op is one seed).
func BenchmarkScenarioSeed(b *testing.B) {
	for _, name := range []string{"ambiguous-delivery", "outbox-queue", "seat-map", "booth"} {
		b.Run(name, func(b *testing.B) {
			sc := load(b, name)
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			sum, err := explore.Run(sc, explore.Options{Seeds: b.N, Workers: 1})
			if err != nil {
				b.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			if !sum.Clean() {
				b.Fatalf("violations: %v", sum.Violations)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N), "alloc-bytes/seed")
		})
	}
}
