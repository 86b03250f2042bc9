package explore

import (
	"context"
	"sync"
	"sync/atomic"
)

// seedLoop is how a sweep hands out its seeds: the k-th seed of total (0
// <= k < total) to each of workers in order, each worker taking the next
// one itself (no goroutine hands them out, which woke one per seed), while
// ctx is not done and, with failFast, no seed has failed. A seed taken is
// always finished, so the seeds run are the first ones: the lowest failing
// seed among them is the sweep's lowest, whatever the workers. run checks
// seed k and says whether it failed.
func seedLoop(ctx context.Context, workers, total int, failFast bool, run func(k int) (failed bool)) {
	var (
		wg     sync.WaitGroup
		next   atomic.Int64 // the next seed to hand out
		failed atomic.Bool
	)
	done := ctx.Done()
	for range min(workers, max(total, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if failFast && failed.Load() {
					return
				}
				k := next.Add(1) - 1
				if k >= int64(total) {
					return
				}
				if run(int(k)) {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
}
