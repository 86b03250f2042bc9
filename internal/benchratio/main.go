// Command benchratio prints how dosim measures against the speed and
// scale targets of issue 14, the peer ratios first: dosim's call costs
// over the hand-written testing/synctest simulation of the same work
// (BenchmarkPeerSynctest in package runtime). It reads the output of go
// test -bench on standard input, copies it to standard output, and ends
// with one line per target: the figure (the median over -count runs), how
// it was reached, the target, and "met" or "not met".
//
//	go test ./runtime -run '^$' -bench 'CallNoFault$|CallAmbiguous$|PeerSynctest' -benchmem -count 3 | go run ./internal/benchratio
//
// make bench feeds it every benchmark a target reads. It exits 1 when the
// input reports a failure or lacks a figure a target needs (-only names
// the targets to check, for a partial run); a figure past its target is
// printed, not an error (make bench measures, it does not gate).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// figure names one metric of one benchmark: its name without the -N
// GOMAXPROCS suffix, and the unit go test printed after the value.
type figure struct{ bench, unit string }

// target is one line of the report: a figure, or the ratio of two (over
// non-empty), held at most (or at least) to limit.
type target struct {
	label    string
	fig      figure
	over     figure // the ratio's denominator; empty: fig alone
	atLeast  bool
	limit    float64
	alsoShow figure // printed beside, not checked (memory per call in flight)
}

// targets are issue 14's, in its order.
var targets = []target{
	{label: "fault-free", fig: figure{"BenchmarkCallNoFault", "ns/op"}, over: figure{"BenchmarkPeerSynctest/fault-free", "ns/op"}, limit: 0.5},
	{label: "ambiguous", fig: figure{"BenchmarkCallAmbiguous", "ns/op"}, over: figure{"BenchmarkPeerSynctest/ambiguous", "ns/op"}, limit: 0.6},
	{label: "allocs", fig: figure{"BenchmarkCallNoFault", "allocs/op"}, limit: 3},
	{label: "record", fig: figure{"BenchmarkRecordRetained", "retained-B/record"}, limit: 160},
	{label: "1e7 calls", fig: figure{"BenchmarkCallsKeepLast", "peak-MB"}, limit: 100},
	{label: "many tasks", fig: figure{"BenchmarkGroupCalls/n=100000", "ns/call"}, over: figure{"BenchmarkGroupCalls/n=2000", "ns/call"}, limit: 1.15,
		alsoShow: figure{"BenchmarkGroupCalls/n=100000", "B/call"}},
	{label: "explorer", fig: figure{"BenchmarkExploreSeed/workers=1", "seeds/s"}, atLeast: true, limit: 40000},
	{label: "2 workers", fig: figure{"BenchmarkExploreSeed/workers=2", "seeds/s"}, over: figure{"BenchmarkExploreSeed/workers=1", "seeds/s"}, atLeast: true, limit: 1.8},
	{label: "sweep heap", fig: figure{"BenchmarkSweepRetainedHeap", "retained-B/seed"}, limit: 1},
}

func main() {
	only := flag.String("only", "", "comma-separated labels of the targets to check (default: all)")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *only); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
}

// run copies in to out, then writes a line per target (those only names,
// or all).
func run(in io.Reader, out io.Writer, only string) error {
	figs, failed, err := parse(io.TeeReader(in, out))
	if err != nil {
		return err
	}
	if failed {
		return fmt.Errorf("the benchmarks failed (see above)")
	}
	chosen, err := choose(only)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "issue 14 targets (medians; the peer is BenchmarkPeerSynctest):")
	var missing []string
	for _, t := range chosen {
		v, okv := median(figs[t.fig])
		text := fmt.Sprintf("%.4g %s", v, t.fig.unit)
		if t.over != (figure{}) {
			d, okd := median(figs[t.over])
			if !okd || d == 0 {
				okv = false
			} else {
				text = fmt.Sprintf("%.4g / %.4g %s = %.2f", v, d, t.fig.unit, v/d)
				v /= d
			}
		}
		if !okv {
			missing = append(missing, t.label)
			continue
		}
		if t.alsoShow != (figure{}) {
			if s, ok := median(figs[t.alsoShow]); ok {
				text += fmt.Sprintf(", %.4g %s", s, t.alsoShow.unit)
			}
		}
		op, met := "<=", v <= t.limit
		if t.atLeast {
			op, met = ">=", v >= t.limit
		}
		verdict := "met"
		if !met {
			verdict = "not met"
		}
		fmt.Fprintf(out, "  %-11s %s  (target %s %g: %s)\n", t.label, text, op, t.limit, verdict)
	}
	if len(missing) > 0 {
		return fmt.Errorf("no figures for %s: run the benchmarks make bench runs", strings.Join(missing, ", "))
	}
	return nil
}

// choose returns the targets only names (comma-separated labels), or all.
func choose(only string) ([]target, error) {
	if only == "" {
		return targets, nil
	}
	var out []target
	for _, l := range strings.Split(only, ",") {
		i := slices.IndexFunc(targets, func(t target) bool { return t.label == strings.TrimSpace(l) })
		if i < 0 {
			labels := make([]string, len(targets))
			for j, t := range targets {
				labels[j] = t.label
			}
			return nil, fmt.Errorf("-only: no target %q (the targets are %s)", l, strings.Join(labels, ", "))
		}
		out = append(out, targets[i])
	}
	return out, nil
}

// parse reads go test -bench output: every value per benchmark name (the
// -N GOMAXPROCS suffix removed) and unit, one per run, and whether a test
// or benchmark failed.
func parse(in io.Reader) (map[figure][]float64, bool, error) {
	figs := map[figure][]float64{}
	failed := false
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && (f[0] == "FAIL" || f[0] == "---" && len(f) > 1 && f[1] == "FAIL:") {
			failed = true
		}
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := trimProcs(f[0])
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, false, fmt.Errorf("line %q: %s %q is not a number", sc.Text(), f[i+1], f[i])
			}
			k := figure{name, f[i+1]}
			figs[k] = append(figs[k], v)
		}
	}
	return figs, failed, sc.Err()
}

// trimProcs drops the -N suffix go test adds for GOMAXPROCS.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// median is the middle figure (the mean of the two middle ones).
func median(v []float64) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	s := slices.Sorted(slices.Values(v))
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m], true
	}
	return (s[m-1] + s[m]) / 2, true
}
