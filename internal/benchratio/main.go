// Command benchratio prints how dosim's call costs compare with the peer,
// the hand-written testing/synctest simulation of the same work
// (BenchmarkPeerSynctest in package runtime, issue 14). It reads the output
// of go test -bench on standard input, copies it to standard output, and
// ends with one line per pair: dosim's ns/op over the peer's, the median
// of each over -count runs, and the target the ratio is held to.
//
//	go test ./runtime -run '^$' -bench 'CallNoFault$|CallAmbiguous$|PeerSynctest' -benchmem -count 3 | go run ./internal/benchratio
//
// It exits 1 when the input reports a failure or lacks a benchmark of a
// pair; a ratio above its target is printed, not an error (make bench
// measures, it does not gate).
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// pair is one comparison: dosim's benchmark, the peer's, the target.
type pair struct {
	label, dosim, peer string
	target             float64
}

// pairs are the comparisons of issue 14: a fault-free call at most half
// the peer's cost, an ambiguous call at most 0.6 of it.
var pairs = []pair{
	{"fault-free", "BenchmarkCallNoFault", "BenchmarkPeerSynctest/fault-free", 0.5},
	{"ambiguous", "BenchmarkCallAmbiguous", "BenchmarkPeerSynctest/ambiguous", 0.6},
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
}

// run copies in to out, then writes the ratios.
func run(in io.Reader, out io.Writer) error {
	times, failed, err := parse(io.TeeReader(in, out))
	if err != nil {
		return err
	}
	if failed {
		return fmt.Errorf("the benchmarks failed (see above)")
	}
	fmt.Fprintln(out, "dosim / peer (median ns/op; the peer is BenchmarkPeerSynctest):")
	var missing []string
	for _, p := range pairs {
		d, okd := median(times[p.dosim])
		q, okq := median(times[p.peer])
		if !okd || !okq || q == 0 {
			missing = append(missing, p.label)
			continue
		}
		r := d / q
		verdict := "met"
		if r > p.target {
			verdict = "not met"
		}
		fmt.Fprintf(out, "  %-10s %8.1f / %8.1f ns/op = %.2f  (target <= %.2f: %s)\n", p.label, d, q, r, p.target, verdict)
	}
	if len(missing) > 0 {
		return fmt.Errorf("no figures for %s: run the benchmarks CallNoFault, CallAmbiguous and PeerSynctest", strings.Join(missing, ", "))
	}
	return nil
}

// parse reads go test -bench output: ns/op per benchmark name (the -N
// GOMAXPROCS suffix removed), one figure per run, and whether a test or
// benchmark failed.
func parse(in io.Reader) (map[string][]float64, bool, error) {
	times := map[string][]float64{}
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
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] != "ns/op" {
				continue
			}
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, false, fmt.Errorf("line %q: ns/op %q is not a number", sc.Text(), f[i])
			}
			times[trimProcs(f[0])] = append(times[trimProcs(f[0])], v)
		}
	}
	return times, failed, sc.Err()
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
