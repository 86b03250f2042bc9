package dosimtest_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goTestReplay is the replay line dosimtest prints: the package, the
// test, the seed and, for a replay by faults, the faults.
var goTestReplay = regexp.MustCompile(`(?m)^replay: go test (\S+) -run '([^']+)' -count=1 -dosim\.seed=(\d+)(?: -dosim\.faults=(\S+))?$`)

// C11, U4: every zoo bug's failure, found by the default strategy and by
// an exhaustive search, prints a go test replay line that names this
// package and this test, and that line, run (its seed and faults given
// as the flags would give them), reports the same violations, byte for
// byte.
func TestC11_EveryZooBugsReplayLineReplaysItsVerdict(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	searches := []struct {
		name string
		opts explore.Options
	}{
		{"mix", explore.Options{Seeds: 2000, FailFast: true}},
		{"exhaustive", explore.Options{Exhaustive: true, MaxFaults: 2}},
	}
	replayed := 0
	for _, b := range zoo.Bugs() {
		for _, s := range searches {
			t.Run(b.Name+"/"+s.name, func(t *testing.T) {
				o := s.opts
				o.Workers, o.Rates, o.Interleaving = 1, b.Rates, b.Interleaving
				if b.Background {
					o.MinChecked = -1
				}
				t.Setenv("DOSIM_SEED", "")
				t.Setenv("DOSIM_FAULTS", "")
				ft := &fakeT{TB: t}
				sum := dosimtest.Func(ft, o, b.Buggy)
				if s.opts.Exhaustive && (sum == nil || sum.FirstFailing == nil) {
					return // not every bug is within two faults of seed 1
				}
				require.NotNil(t, sum)
				require.NotNil(t, sum.FirstFailing, "the default strategy finds %s within %d seeds", b.Name, o.Seeds)
				require.Len(t, ft.errors, 1)
				m := goTestReplay.FindStringSubmatch(ft.errors[0])
				require.NotNil(t, m, "a replay line in:\n%s", ft.errors[0])
				assert.Equal(t, "github.com/dosim/dosim/dosimtest", m[1])
				assertRuns(t, m[2], t.Name())
				t.Setenv("DOSIM_SEED", m[3])
				t.Setenv("DOSIM_FAULTS", m[4])
				again := &fakeT{TB: t}
				dosimtest.Func(again, o, b.Buggy)
				require.Len(t, again.errors, 1, "the replay line %s fails again", m[0])
				assert.Equal(t, violationLines(ft.errors[0]), violationLines(again.errors[0]), m[0])
				replayed++
			})
		}
	}
	assert.GreaterOrEqual(t, replayed, len(zoo.Bugs()), "every bug's default failure was replayed")
}

// violationLines are the lines of a report between "violates:" and its
// replay line.
func violationLines(report string) string {
	_, after, ok := strings.Cut(report, " violates:\n")
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, "replay: ")
	return before
}

// assertRuns checks that go test -run pattern runs the test named name:
// each part of the pattern, split at slashes as go test splits it,
// matches the same part of the name.
func assertRuns(t *testing.T, pattern, name string) {
	t.Helper()
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	require.Len(t, ps, len(ns), "-run %q for %s", pattern, name)
	for i := range ps {
		assert.Regexp(t, ps[i], ns[i], "-run %q for %s", pattern, name)
	}
}
