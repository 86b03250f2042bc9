package runtime_test

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// BenchmarkHandoffFloor is the floor for any cooperative scheduler built on
// goroutines: two goroutines hand a token back and forth on unbuffered
// channels. One op is one round trip (two handoffs), as a call is: the
// caller hands the processor to the object's turn and the turn hands it back.
func BenchmarkHandoffFloor(b *testing.B) {
	ping, pong := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ping {
			pong <- struct{}{}
		}
	}()
	b.ResetTimer()
	for range b.N {
		ping <- struct{}{}
		<-pong
	}
	b.StopTimer()
	close(ping)
	<-done
}

// BenchmarkCallNoFault is one fault-free Call that reads and writes storage.
func BenchmarkCallNoFault(b *testing.B) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	b.ReportAllocs()
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("apple")
		if err != nil {
			return err
		}
		b.ResetTimer()
		for range b.N {
			if _, err := s.Call(ctx, "AddOne", "apple"); err != nil {
				return err
			}
		}
		b.StopTimer()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkManyObjects makes 10,000 objects with one call each. It reports
// B/op (everything allocated, records and garbage included) and
// idle-B/object: the heap each object still holds, call record included,
// once its call is done and garbage is collected.
func BenchmarkManyObjects(b *testing.B) {
	const objects = 10_000
	b.ReportAllocs()
	var retained uint64
	for range b.N {
		before := heapNow()
		rt := runtime.New()
		ns := rt.Namespace("INVENTORY", examples.NewInventory)
		err := rt.Run(func(ctx context.Context) error {
			for i := range objects {
				s, err := ns.GetByName(fmt.Sprint("item-", i))
				if err != nil {
					return err
				}
				if _, err := s.Call(ctx, "SetQuantity", "x", i); err != nil {
					return fmt.Errorf("%w", err)
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		retained += heapNow() - before
		goruntime.KeepAlive(rt)
		rt.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(retained)/float64(b.N)/objects, "idle-B/object")
}

// BenchmarkCallAmbiguous is one call of a Retryable method whose first
// reply is lost: two attempts and one backoff sleep.
func BenchmarkCallAmbiguous(b *testing.B) {
	plan := transport.Plan(transport.Rule{Method: "SetQuantity", Attempt: 1, Fault: transport.LoseResponse})
	rt := runtime.New(runtime.WithFaults(plan))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	b.ReportAllocs()
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("apple")
		if err != nil {
			return err
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := s.Call(ctx, "SetQuantity", "apple", i); err != nil {
				return err
			}
		}
		b.StopTimer()
		if c := rt.Calls()[0]; len(c.Attempts) != 2 || c.Outcome != transport.OutcomeRecovered {
			return fmt.Errorf("want two attempts and a recovery, got %d and %s", len(c.Attempts), c.Outcome)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// groupSizes are BenchmarkGroupCalls's sizes; DOSIM_GROUP_SIZES=1000000
// (comma-separated) runs others, to see what grows past them.
func groupSizes() ([]int, error) {
	v := os.Getenv("DOSIM_GROUP_SIZES")
	if v == "" {
		return []int{2_000, 100_000}, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("DOSIM_GROUP_SIZES: %q is not a positive number of calls", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// BenchmarkGroupCalls runs n concurrent fault-free calls in one Group, on
// 100 objects: one op is one call. Time per call should not grow with n
// (issue 14: no list the scheduler scans per switch grows with the tasks).
//
// The 100 stubs are got once per run, before the calls: getting a stub is
// not part of a call (a program gets one per object and calls it many
// times). A run's New, stubs and Close are timed, spread over its n calls.
//
// B/call is the live heap (after a collection) with all n calls started
// and none run yet, less the heap before they started, over n: what a call
// waiting in the group holds. done-B/call is the same once all n have
// returned: what a finished call leaves behind (its record). Both are
// measured outside the timer, in each benchmark run's first op.
func BenchmarkGroupCalls(b *testing.B) {
	sizes, err := groupSizes()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			calls := 0
			var waiting, done uint64
			for i := range b.N {
				rt := runtime.New()
				ns := rt.Namespace("INVENTORY", examples.NewInventory)
				err := rt.Run(func(ctx context.Context) error {
					stubs := make([]*stub.Stub, 100)
					for j := range stubs {
						s, err := ns.GetByName(fmt.Sprintf("shop-%d", j))
						if err != nil {
							return err
						}
						stubs[j] = s
					}
					var base uint64
					if i == 0 {
						base = liveHeap(b)
					}
					g := rt.Group(ctx)
					for j := range n {
						s := stubs[j%100]
						g.Go(func(ctx context.Context) error {
							_, err := s.Call(ctx, "AddOne", "apple")
							return err
						})
					}
					if i == 0 {
						waiting = liveHeap(b) - base
					}
					err := g.Wait()
					if i == 0 {
						done = liveHeap(b) - base
					}
					return err
				})
				rt.Close()
				if err != nil {
					b.Fatal(err)
				}
				calls += n
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/call")
			b.ReportMetric(float64(waiting)/float64(n), "B/call")
			b.ReportMetric(float64(done)/float64(n), "done-B/call")
		})
	}
}

// liveHeap collects garbage and returns the live heap, with the
// benchmark's timer stopped meanwhile.
func liveHeap(b *testing.B) uint64 {
	b.StopTimer()
	defer b.StartTimer()
	return heapNow()
}

// heapNow collects garbage and returns the live heap; the timer is the
// caller's.
func heapNow() uint64 {
	var m goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// sqlNote is a class whose Note does one INSERT and one SELECT.
type sqlNote struct {
	st    *object.State
	ready bool
}

func (n *sqlNote) Methods() object.Methods {
	return object.Methods{"Note": object.Func(n.Note)}
}

func (n *sqlNote) Note(ctx context.Context, v int) (int, error) {
	db := n.st.SQL()
	if !n.ready {
		if _, err := db.Exec(ctx, "CREATE TABLE IF NOT EXISTS notes (v INTEGER)"); err != nil {
			return 0, err
		}
		n.ready = true
	}
	if _, err := db.Exec(ctx, "INSERT INTO notes (v) VALUES (?)", v); err != nil {
		return 0, err
	}
	c, err := db.Exec(ctx, "SELECT v FROM notes WHERE rowid = last_insert_rowid()")
	if err != nil {
		return 0, err
	}
	var got int
	return got, c.One(&got)
}

// BenchmarkCallSQL is BenchmarkCallNoFault with a method that does one
// INSERT and one SELECT in the object's SQL database (rule Q1).
func BenchmarkCallSQL(b *testing.B) {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("NOTES", func(st *object.State) object.Object { return &sqlNote{st: st} })
	b.ReportAllocs()
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("n")
		if err != nil {
			return err
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := s.Call(ctx, "Note", i); err != nil {
				return err
			}
		}
		b.StopTimer()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// rss is the process's resident memory from /proc (0 where there is none):
// SQLite's pages live outside the Go heap.
func rss() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, res uint64
	if _, err := fmt.Sscan(string(data), &size, &res); err != nil {
		return 0
	}
	return res * uint64(os.Getpagesize())
}

// BenchmarkManyObjectsSQL makes 10,000 objects that each used SQL once
// (a table, one row). It reports heap-B/object (the Go heap each keeps)
// and rss-B/object (the resident memory each adds, SQLite's included).
func BenchmarkManyObjectsSQL(b *testing.B) {
	const objects = 10_000
	var heap, res uint64
	for range b.N {
		before := heapNow()
		rssBefore := rss()
		rt := runtime.New()
		ns := rt.Namespace("NOTES", func(st *object.State) object.Object { return &sqlNote{st: st} })
		err := rt.Run(func(ctx context.Context) error {
			for i := range objects {
				s, err := ns.GetByName(fmt.Sprint("n-", i))
				if err != nil {
					return err
				}
				if _, err := s.Call(ctx, "Note", i); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		heap += heapNow() - before
		if r := rss(); r > rssBefore {
			res += r - rssBefore
		}
		goruntime.KeepAlive(rt)
		rt.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/float64(b.N)/objects, "heap-B/object")
	b.ReportMetric(float64(res)/float64(b.N)/objects, "rss-B/object")
}
