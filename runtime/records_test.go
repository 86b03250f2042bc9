package runtime_test

import (
	"context"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// addOnes makes calls AddOne calls on one object of rt.
func addOnes(t testing.TB, rt *runtime.Runtime, calls int) {
	t.Helper()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("apple")
		if err != nil {
			return err
		}
		for range calls {
			if _, err := s.Call(ctx, "AddOne", "apple"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestD2_KeepLastKeepsTheLastNAndTheSinkSeesAll checks the bounded mode:
// Calls holds the last n calls begun, in order, and the sink got every
// record as its call ended, complete.
func TestD2_KeepLastKeepsTheLastNAndTheSinkSeesAll(t *testing.T) {
	var sunk []runtime.CallRecord
	rt := runtime.New(runtime.WithRecords(runtime.KeepLast(3)), runtime.WithRecordSink(func(c runtime.CallRecord) { sunk = append(sunk, c) }))
	defer rt.Close()
	addOnes(t, rt, 10)
	calls := rt.Calls()
	if len(calls) != 3 {
		t.Fatalf("KeepLast(3): Calls has %d records, want 3", len(calls))
	}
	for i, c := range calls {
		if want := 8 + i; c.Result != want {
			t.Errorf("Calls()[%d].Result = %v, want %d (the last three calls)", i, c.Result, want)
		}
	}
	if len(sunk) != 10 {
		t.Fatalf("the sink got %d records, want 10", len(sunk))
	}
	for i, c := range sunk {
		if c.Result != i+1 || c.Outcome != transport.OutcomeOK || c.Ended == 0 || len(c.Attempts) != 1 {
			t.Errorf("sunk[%d] = result %v outcome %q ended %d attempts %d, want result %d, ok, ended, one attempt", i, c.Result, c.Outcome, c.Ended, len(c.Attempts), i+1)
		}
	}
	if got, want := sunk[9].RequestID, calls[2].RequestID; got != want {
		t.Errorf("the last sunk record is %s, the last kept %s", got, want)
	}
}

// TestD2_KeepAllIsTheDefault checks that without WithRecords every
// record stays, and that KeepAll says so.
func TestD2_KeepAllIsTheDefault(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	addOnes(t, rt, 50)
	if n := len(rt.Calls()); n != 50 {
		t.Errorf("default: Calls has %d records, want 50", n)
	}
	if s := runtime.KeepAll().String(); s != "all" {
		t.Errorf("KeepAll().String() = %q", s)
	}
}

// TestD2_KeepLastBelowOneIsAnError checks that Run refuses KeepLast(0),
// naming the option and what is allowed.
func TestD2_KeepLastBelowOneIsAnError(t *testing.T) {
	rt := runtime.New(runtime.WithRecords(runtime.KeepLast(0)))
	defer rt.Close()
	err := rt.Run(func(context.Context) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "KeepLast(0): n must be >= 1") {
		t.Errorf("err = %v, want KeepLast(0): n must be >= 1", err)
	}
}

// retainedAfter is the heap still held after calls AddOne calls on a
// runtime made with opts, the runtime kept alive, garbage collected.
func retainedAfter(t testing.TB, calls int, opts ...runtime.Option) uint64 {
	goruntime.GC()      // twice (heapNow collects again): what earlier tests
	before := heapNow() // left to finalizers goes too, not during the measure
	rt := runtime.New(opts...)
	addOnes(t, rt, calls)
	after := heapNow()
	goruntime.KeepAlive(rt)
	rt.Close()
	if after < before {
		return 0
	}
	return after - before
}

// TestD2_KeepLastReleasesEarlierRecords checks that a bounded run lets go
// of its earlier records: 100,000 calls with KeepLast(100) hold a small
// fraction of what they hold with every record kept (no timing: bytes).
func TestD2_KeepLastReleasesEarlierRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 calls twice")
	}
	const calls = 100_000
	full := retainedAfter(t, calls)
	bounded := retainedAfter(t, calls, runtime.WithRecords(runtime.KeepLast(100)))
	if full < calls*64 {
		t.Fatalf("every record kept: %d bytes retained for %d calls, fewer than 64 B a record (a record is 128): the measure is broken", full, calls)
	}
	if bounded*20 > full {
		t.Errorf("KeepLast(100) retains %d bytes after %d calls, more than 1/20 of the %d every record keeps", bounded, calls, full)
	}
}

// BenchmarkRecordRetained measures the heap a call record keeps: 100,000
// AddOne calls on one object with every record (the default), retained
// after garbage collection, per record.
func BenchmarkRecordRetained(b *testing.B) {
	const calls = 100_000
	var total uint64
	for range b.N {
		total += retainedAfter(b, calls)
	}
	b.ReportMetric(float64(total)/float64(b.N)/calls, "retained-B/record")
}

// BenchmarkCallsKeepLast is one AddOne call per op on one object with
// KeepLast(1000) and a sink that counts: memory stays flat however many
// calls run. It reports the heap retained at the end (retained-MB) and
// the largest live heap sampled every 2^16 calls (peak-MB). Run it at ten
// million calls with -benchtime 10000000x.
func BenchmarkCallsKeepLast(b *testing.B) {
	var before, m goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	var peak uint64
	sunk := 0
	rt := runtime.New(runtime.WithRecords(runtime.KeepLast(1000)), runtime.WithRecordSink(func(runtime.CallRecord) {
		sunk++
		if sunk&(1<<16-1) == 0 {
			goruntime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	}))
	b.ReportAllocs()
	b.ResetTimer()
	addOnes(b, rt, b.N)
	b.StopTimer()
	goruntime.GC()
	goruntime.ReadMemStats(&m)
	goruntime.KeepAlive(rt)
	rt.Close()
	if sunk != b.N {
		b.Fatalf("the sink got %d records for %d calls", sunk, b.N)
	}
	mb := func(v uint64) float64 {
		if v < before.HeapAlloc {
			return 0
		}
		return float64(v-before.HeapAlloc) / (1 << 20)
	}
	b.ReportMetric(mb(m.HeapAlloc), "retained-MB")
	b.ReportMetric(mb(max(peak, m.HeapAlloc)), "peak-MB")
}

// TestD2_AFaultFreeCallAllocatesAtMostThree: a fault-free AddOne (issue
// 14: at most 3 allocations a call, the method's own included) allocates
// the stored value's box and the result's box: its record and its turn's
// context come from slabs, its frame and turn are the last call's.
func TestD2_AFaultFreeCallAllocatesAtMostThree(t *testing.T) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	var allocs float64
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("apple")
		if err != nil {
			return err
		}
		for range 300 { // results past 255 are boxed, as most are
			if _, err := s.Call(ctx, "AddOne", "apple"); err != nil {
				return err
			}
		}
		allocs = testing.AllocsPerRun(1000, func() {
			if _, err := s.Call(ctx, "AddOne", "apple"); err != nil {
				t.Error(err)
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs > 3 {
		t.Errorf("a fault-free call allocates %.2f times, more than 3", allocs)
	}
}
