package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkCallNoFault-2     	 1357272	       800 ns/op	     689 B/op	       6 allocs/op
BenchmarkCallNoFault-2     	 1357272	       790 ns/op	     689 B/op	       6 allocs/op
BenchmarkCallNoFault-2     	 1357272	      9999 ns/op	     689 B/op	       6 allocs/op
BenchmarkCallAmbiguous-2   	  890707	      1500 ns/op	    1232 B/op	      13 allocs/op
BenchmarkPeerSynctest/fault-free-2         	 2424682	       400.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkPeerSynctest/ambiguous-2          	  644102	      3000 ns/op	       0 B/op	       0 allocs/op
PASS
`

// TestRatiosAreMediansOverThePeer checks the printed ratios: the median of
// dosim's runs (800, not the outlier) over the peer's, with the verdicts.
func TestRatiosAreMediansOverThePeer(t *testing.T) {
	var out strings.Builder
	if err := run(strings.NewReader(sample), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, sample) {
		t.Errorf("the input is not copied first:\n%s", got)
	}
	for _, want := range []string{"= 2.00  (target <= 0.50: not met)", "= 0.50  (target <= 0.60: met)"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestMissingOrFailedBenchmarksAreErrors checks the exit paths: a pair
// without figures, and a failed run.
func TestMissingOrFailedBenchmarksAreErrors(t *testing.T) {
	var out strings.Builder
	err := run(strings.NewReader("BenchmarkCallNoFault-2 10 800 ns/op\n"), &out)
	if err == nil || !strings.Contains(err.Error(), "no figures for fault-free, ambiguous") {
		t.Errorf("missing peer: err = %v", err)
	}
	err = run(strings.NewReader(sample+"--- FAIL: BenchmarkX\nFAIL\n"), &out)
	if err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("failed run: err = %v", err)
	}
}
