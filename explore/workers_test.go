package explore_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// summaryJSON is a sweep's summary as dosim explore --json writes it:
// counts, violations, the first failing seed shrunk, and the fingerprint
// of it all.
func summaryJSON(t *testing.T, sum *explore.Summary) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, sum.WriteJSON(&b))
	return b.String()
}

// sameAtEveryWorkerCount sweeps with 1, 4 and 2 workers, each time with
// an explorer of its own, and checks the summaries are byte for byte the
// same.
func sameAtEveryWorkerCount(t *testing.T, sweep func(workers int) *explore.Summary) {
	t.Helper()
	want := summaryJSON(t, sweep(1))
	for _, w := range []int{4, 2} {
		if got := summaryJSON(t, sweep(w)); got != want {
			t.Fatalf("the summary at %d workers differs from the one at 1:\n%s", w, firstDifference(want, got))
		}
	}
}

// firstDifference shows the first line where a and b differ.
func firstDifference(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return "line " + la[i] + "\n  vs " + lb[i]
		}
	}
	return "one is longer"
}

// D1 (issue 31): a sweep's summary (its counts, violations, first failing
// seed and reports) does not depend on how many workers ran it, nor on
// which seed a worker checked first, though the workers share one model
// and its memos: every shipped scenario, every zoo bug and its fixed
// form, and a class that keeps its state in fields. A step or a verdict
// that depends on more than its memo key (a replay that read past its
// turn, an instance the model keeps) is memoised per turn.
func TestD1_ASweepsSummaryDoesNotDependOnItsWorkers(t *testing.T) {
	files, err := filepath.Glob("../testdata/scenarios/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenario.Load(f, builtIns)
			require.NoError(t, err)
			sweep := func(workers int) *explore.Summary {
				sum, err := explore.Run(sc, explore.Options{Seeds: countSeeds(200), Workers: workers})
				require.NoError(t, err)
				return sum
			}
			if !sqlBuilt {
				if sum := sweep(1); sum.Total > 0 && strings.Contains(sum.Violations[0].Message, "dosim_nosql") {
					t.Skip("its class keeps SQL, which this build (dosim_nosql) leaves out: make test's race step runs it")
				}
			}
			sameAtEveryWorkerCount(t, sweep)
		})
	}
	for _, b := range zoo.Bugs() {
		seeds := countSeeds(100)
		if b.Background {
			seeds = countSeeds(20) // a poisoned queue's run goes on for a day: 70 ms a seed
		}
		for form, fn := range map[string]zoo.Driver{"buggy": b.Buggy, "fixed": b.Fixed} {
			t.Run(b.Name+"/"+form, func(t *testing.T) {
				sameAtEveryWorkerCount(t, func(workers int) *explore.Summary {
					o := zooOptions(b, strategies[0], 1, seeds)
					// Shrinking runs on one goroutine after the sweep (the
					// scenarios' and the limiter's check it): the zoo's
					// sweeps keep their first failing seed whole, for time.
					o.Workers, o.NoShrink = workers, true
					sum, err := explore.RunFunc(o, fn)
					require.NoError(t, err)
					return sum
				})
			})
		}
	}
	for name, leaky := range map[string]bool{"limiter": false, "limiter-leaky": true} {
		t.Run(name, func(t *testing.T) {
			sameAtEveryWorkerCount(t, func(workers int) *explore.Summary {
				sum, err := explore.RunFunc(explore.Options{Seeds: countSeeds(3000), Workers: workers}, limit(leaky))
				require.NoError(t, err)
				if !leaky {
					assert.Zero(t, sum.Total)
				}
				return sum
			})
		})
	}
}
