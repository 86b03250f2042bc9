package platformtest

import (
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// deliberate lists the results (case/result) where dosim differs from the
// platform on purpose, each with its reason: DESIGN's "Where dosim
// deliberately differs from the real runtime" and nothing else. The seed's
// other deliberate difference, a retry in flight at the deadline cancelled
// (S9), is not observable here: no case can make workerd's link fail.
var deliberate = map[string]string{
	"stub-options/unknownKey": "unknown keys in stub and retry options are refused, where the platform ignores them (DESIGN; S2): a typo is caught",
}

// awaiting lists the results (case/result) that differ on this branch
// because the change that removes the difference is on another branch not
// merged yet, each with that branch. Empty it as the branches land: an
// entry that agrees fails the test.
var awaiting = map[string]string{
	// An error thrown by object code keeps its properties across the
	// boundary (a *stub.Error's flags, a user's error type as a copy).
	"error-props/retryable":  "i22-errors",
	"error-props/overloaded": "i22-errors",
	"error-props/code":       "i22-errors",
	// Requests queued at a reset fail with the same reset error, not
	// retried (0 runs); a running request fails at the reset, at once.
	"queued-at-reset/queued0":                              "i22-reset",
	"queued-at-reset/queued1":                              "i22-reset",
	"queued-at-reset/queued2":                              "i22-reset",
	"queued-at-reset/countRuns":                            "i22-reset",
	"abort-while-running/runningFailedBeforeItsSleepEnded": "i22-reset",
	// Found by this test, on no branch yet: workerd 1.20261117.1 refuses
	// more than 128 keys in get() only; put() of 129 pairs and delete() of
	// 129 keys succeed, for both classes. dosim refuses all three.
	// Measured with DOSIM_WORKERD_SLOW=1: workerd 1.20261117.1 delivers an
	// always-failing alarm 6 times (retryCount 0-5, waits 2, 4, 8, 16, 32 s,
	// no jitter seen) and then getAlarm still returns the scheduled time.
	// dosim today: 7 deliveries (0-6), then no alarm. Issue 22 says 7 with
	// jitter (i22-alarms builds that): the measurement disagrees; decide.
	"alarm-retry-all/deliveries":     "i22-alarms, but workerd gives 6, not 7: decide",
	"alarm-retry-all/retryCounts":    "i22-alarms, but workerd gives 0-5, not 0-6: decide",
	"alarm-retry-all/afterAllIsNull": "none yet (found by i22-workerd: getAlarm after the last retry is the scheduled time)",
	"storage-pairs/put129":           "none yet (found by i22-workerd: 128-key limit on get only)",
	"storage-pairs/delete129":        "none yet (found by i22-workerd: 128-key limit on get only)",
}

// TestAgainstWorkerd runs every case on workerd and through dosim, for
// the SQLite-backed and the KV-backed class, and fails on each difference
// not listed in deliberate or awaiting (issue 22, "Keep it true").
// Reference: real workerd, the version pinned in testdata/workerd.
func TestAgainstWorkerd(t *testing.T) {
	p := startWorkerd(t)
	slow := os.Getenv("DOSIM_WORKERD_SLOW") == "1"
	var mu sync.Mutex // slow cases run in parallel
	ran, awaited := 0, []string{}
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			if c.slow && !slow {
				t.Logf("case %s waits for real retries (minutes): run it with DOSIM_WORKERD_SLOW=1", c.name)
				continue
			}
			for _, class := range []string{"sql", "kv"} {
				t.Run(c.name+"/"+class, func(t *testing.T) {
					if c.slow {
						t.Parallel()
					}
					diffs := compareCase(t, p, c, class)
					mu.Lock()
					defer mu.Unlock()
					ran++
					awaited = append(awaited, judge(t, c.name, diffs)...)
				})
			}
		}
	})
	slices.Sort(awaited)
	awaited = slices.Compact(awaited)
	t.Logf("%s: %d case runs (%d cases x 2 classes); %d results awaiting other branches", p.version, ran, ran/2, len(awaited))
	for _, a := range awaited {
		t.Logf("awaiting %s: %s", awaiting[a], a)
	}
}

// compareCase runs c for class on the platform and through dosim and
// returns their differences.
func compareCase(t *testing.T, p *platform, c dosimCase, class string) map[string]string {
	t.Helper()
	plat, err := p.observe(t.Context(), c.name, class)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("platform: %s", show(plat))
	got, err := runDosim(t.Context(), c, class)
	if err != nil {
		t.Fatal(err)
	}
	return differences(plat, got)
}

// judge fails the test on each difference not listed, and on each listed
// result of the case that no longer differs. It returns the awaited
// results that differed.
func judge(t *testing.T, name string, diffs map[string]string) []string {
	t.Helper()
	var awaited []string
	for _, k := range slices.Sorted(maps.Keys(diffs)) {
		key, why := name+"/"+k, diffs[k]
		switch {
		case deliberate[key] != "":
			t.Logf("deliberate difference %s: %s (%s)", key, why, deliberate[key])
		case awaiting[key] != "":
			t.Logf("AWAITING %s: %s: %s", awaiting[key], key, why)
			awaited = append(awaited, key)
		default:
			t.Errorf("%s differs from the platform: %s", key, why)
		}
	}
	for _, list := range []map[string]string{deliberate, awaiting} {
		for key := range list {
			if n, k, _ := strings.Cut(key, "/"); n == name {
				if _, ok := diffs[k]; !ok {
					t.Errorf("%s is listed as a difference but now agrees with the platform: remove it from the list", key)
				}
			}
		}
	}
	return awaited
}
