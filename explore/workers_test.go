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
// form, a class that keeps its state in fields, and one whose turns
// interleave at their awaits, declared so or not. A step or a verdict
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
	for name, interleave := range map[string][]string{"flusher": nil, "flusher-declared": {"alarm"}} {
		t.Run(name, func(t *testing.T) {
			sameAtEveryWorkerCount(t, func(workers int) *explore.Summary {
				sum, err := explore.RunFunc(explore.Options{Seeds: countSeeds(1000), Workers: workers, Interleaving: interleave}, flush(false))
				require.NoError(t, err)
				return sum
			})
		})
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

// D1 (issue 31): what a seed's check finds does not depend on the seeds
// checked before it with the same model: a sweep of seeds 1 to n finds,
// seed by seed, what n sweeps of one seed each, each with a model of its
// own, find. A memo key that leaves out something a step or a verdict
// depends on (a turn cut short, the instant a replay read past its turn,
// the instance the model keeps) shows here as a seed whose verdict
// changes.
func TestD1_ASeedsVerdictDoesNotDependOnTheSeedsBeforeIt(t *testing.T) {
	cases := map[string]func(o explore.Options) (*explore.Summary, error){
		"flusher": func(o explore.Options) (*explore.Summary, error) { return explore.RunFunc(o, flush(false)) },
		"flusher-declared": func(o explore.Options) (*explore.Summary, error) {
			o.Interleaving = []string{"alarm"}
			return explore.RunFunc(o, flush(false))
		},
		"limiter": func(o explore.Options) (*explore.Summary, error) { return explore.RunFunc(o, limit(false)) },
	}
	for _, b := range zoo.Bugs() {
		if b.Background {
			continue // a day of background work a seed: the zoo's other tests sweep them
		}
		cases["zoo/"+b.Name] = func(o explore.Options) (*explore.Summary, error) {
			z := zooOptions(b, strategies[0], o.First, o.Seeds)
			z.Workers, z.NoShrink = 1, true
			return explore.RunFunc(z, b.Buggy)
		}
	}
	for name, sweep := range cases {
		t.Run(name, func(t *testing.T) {
			n := countSeeds(300)
			if strings.HasPrefix(name, "zoo/") {
				n = countSeeds(100)
			}
			all, err := sweep(explore.Options{Seeds: n, Workers: 1, NoShrink: true})
			require.NoError(t, err)
			var histories, failed int
			unchecked := map[string]int{}
			var violations []explore.Violation
			for seed := uint64(1); seed <= uint64(n); seed++ {
				one, err := sweep(explore.Options{First: seed, Seeds: 1, Workers: 1, NoShrink: true})
				require.NoError(t, err)
				histories += one.Histories
				failed += one.Failed
				for why, k := range one.Unchecked {
					unchecked[why] += k
				}
				violations = append(violations, one.Violations...)
			}
			assert.Equal(t, histories, all.Histories)
			assert.Equal(t, failed, all.Failed)
			if len(unchecked) == 0 {
				unchecked = nil
			}
			assert.Equal(t, unchecked, all.Unchecked)
			if violations == nil {
				violations = []explore.Violation{}
			}
			assert.Equal(t, violations[:min(len(violations), explore.MaxViolations)], all.Violations)
		})
	}
}
