package cli

import (
	"os"
	"runtime/debug"
)

// collectorBudget is how far the heap may grow past what is live before
// Go's garbage collector runs again (GOGC, as a percentage), while Main
// runs. A sweep allocates briskly and keeps little (a few megabytes of
// memos and caches), so at Go's default of 100 it spends a fifth to a
// third of its CPU collecting; at 400 a sweep of
// testdata/scenarios/outbox-queue.yaml runs in 0.67 of the time,
// ambiguous-delivery.yaml in 0.75, booth.yaml and seat-map.yaml in 0.85,
// for a peak resident memory about 1.7 times as large, still flat in the
// seeds (docs/speed.md: farm-bench of the whole command, GOGC=400
// against the default). A GOGC the user set wins.
type collectorBudget struct{ percent int }

// mainCollector is Main's budget.
var mainCollector = collectorBudget{percent: 400}

// apply sets the budget, unless getenv says GOGC is set, and returns what
// puts the collector back as it was.
func (b collectorBudget) apply(getenv func(string) string) (undo func()) {
	if b.percent <= 0 || getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(b.percent)
	return func() { debug.SetGCPercent(old) }
}

// budgetCollector applies Main's budget with the process's environment.
func budgetCollector() func() { return mainCollector.apply(os.Getenv) }
