package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkCallNoFault-2     	 1357272	       800 ns/op	     689 B/op	       6 allocs/op
BenchmarkCallNoFault-2     	 1357272	       790 ns/op	     689 B/op	       2 allocs/op
BenchmarkCallNoFault-2     	 1357272	      9999 ns/op	     689 B/op	       2 allocs/op
BenchmarkCallAmbiguous-2   	  890707	      1500 ns/op	    1232 B/op	      13 allocs/op
BenchmarkPeerSynctest/fault-free-2         	 2424682	       400.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkPeerSynctest/ambiguous-2          	  644102	      3000 ns/op	       0 B/op	       0 allocs/op
BenchmarkRecordRetained-2   	      20	  61001123 ns/op	       144.5 retained-B/record
BenchmarkCallsKeepLast-2   	10000000	       400 ns/op	         2.5 retained-MB	         3.6 peak-MB
BenchmarkGroupCalls/n=2000-2  853  1427406 ns/op  345.1 B/call  222.1 done-B/call  1000 ns/call
BenchmarkGroupCalls/n=100000-2  10  107086922 ns/op  345.7 B/call  198.8 done-B/call  1100 ns/call
BenchmarkExploreSeed/workers=1-2  45945  26344 ns/op  37960 seeds/s
BenchmarkExploreSeed/workers=2-2  76867  14999 ns/op  76000 seeds/s
BenchmarkSweepRetainedHeap-2  100000  20000 ns/op  0.02 retained-B/seed
PASS
`

// TestEveryTargetIsAMedianAgainstItsLimit checks the printed lines: the
// median of the runs (800 ns, not the outlier; 2 allocs), ratios over
// their denominators, at-least targets, and the verdicts.
func TestEveryTargetIsAMedianAgainstItsLimit(t *testing.T) {
	var out strings.Builder
	if err := run(strings.NewReader(sample), &out, ""); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, sample) {
		t.Errorf("the input is not copied first:\n%s", got)
	}
	for _, want := range []string{
		"fault-free  800 / 400 ns/op = 2.00  (target <= 0.5: not met)",
		"ambiguous   1500 / 3000 ns/op = 0.50  (target <= 0.6: met)",
		"allocs      2 allocs/op  (target <= 3: met)",
		"record      144.5 retained-B/record  (target <= 160: met)",
		"1e7 calls   3.6 peak-MB  (target <= 100: met)",
		"many tasks  1100 / 1000 ns/call = 1.10, 345.7 B/call  (target <= 1.15: met)",
		"explorer    3.796e+04 seeds/s  (target >= 40000: not met)",
		"2 workers   7.6e+04 / 3.796e+04 seeds/s = 2.00  (target >= 1.8: met)",
		"sweep heap  0.02 retained-B/seed  (target <= 1: met)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestMissingOrFailedBenchmarksAreErrors checks the exit paths: a target
// without figures, a failed run, and an unknown -only label.
func TestMissingOrFailedBenchmarksAreErrors(t *testing.T) {
	var out strings.Builder
	err := run(strings.NewReader("BenchmarkCallNoFault-2 10 800 ns/op\n"), &out, "fault-free,allocs")
	if err == nil || !strings.Contains(err.Error(), "no figures for fault-free, allocs") {
		t.Errorf("missing peer: err = %v", err)
	}
	err = run(strings.NewReader(sample+"--- FAIL: BenchmarkX\nFAIL\n"), &out, "")
	if err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("failed run: err = %v", err)
	}
	err = run(strings.NewReader(sample), &out, "speed")
	if err == nil || !strings.Contains(err.Error(), `no target "speed"`) {
		t.Errorf("unknown target: err = %v", err)
	}
	out.Reset()
	if err := run(strings.NewReader(sample), &out, "allocs"); err != nil || strings.Contains(out.String(), "fault-free  ") {
		t.Errorf("-only allocs: err %v, output:\n%s", err, out.String())
	}
}
