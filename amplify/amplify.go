// Package amplify works out how retries multiply with an application's own
// loop (rule S15): an operation tried Outer times by the application, each
// try a call through a stub that itself retries MaxRetries times, can reach
// the object up to Outer × (MaxRetries+1) times (Worst). Run also simulates
// such operations under a random fault, each in its own seeded runtime, and
// summarises how often the object was reached and how long operations took.
// It is what dosim amplify prints.
//
// Configuration is an options struct (Options) that one call takes, as
// explore.Options and verify.Options are (each field says what its zero
// value means):
//
//	res, err := amplify.Run(amplify.Options{Outer: 3, MaxRetries: 4,
//		Class: examples.NewInventory, Method: "SetQuantity", Args: []any{"apple", 1},
//		Fault: transport.LoseResponse, Rate: 0.3, Trials: 1000, Seed: 1})
//	fmt.Println(res.Worst, res.Executions.P99)
package amplify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// MaxOuter is the largest application loop Run simulates.
const MaxOuter = 100

// MaxTrials is the most operations Run simulates.
const MaxTrials = 10_000_000

// ErrRun is wrapped by the error Run returns when a simulated trial itself
// failed (a deadlock, a panic): a bug, not a result.
var ErrRun = errors.New("the simulation failed")

// Worst returns the most times an object can be reached when an
// application loop makes outer attempts of a call through a stub allowing
// maxRetries retries (rule S15): every outer attempt may itself be tried
// maxRetries+1 times. Three outer attempts around a default stub reach the
// object up to 15 times. An outer below 1, or a maxRetries the stub does
// not accept, is an error wrapping stub.ErrRange.
func Worst(outer, maxRetries int) (int, error) {
	if outer < 1 {
		return 0, fmt.Errorf("amplification: outer attempts is %d: %w: must be >= 1", outer, stub.ErrRange)
	}
	if maxRetries < stub.MinMaxRetries || maxRetries > stub.MaxMaxRetries {
		return 0, fmt.Errorf("amplification: maxRetries is %d: %w: must be an integer from %d to %d", maxRetries, stub.ErrRange, stub.MinMaxRetries, stub.MaxMaxRetries)
	}
	return outer * (maxRetries + 1), nil
}

// Options describes the application loop Run measures: Outer
// attempts of an operation, each a call through a stub that itself retries
// (rule S15), under a random fault at Rate on every attempt.
type Options struct {
	// Outer is the number of attempts of the application's own loop (>= 1).
	Outer int
	// MaxRetries is the stub's retry limit, 0 to 10 (stub.DefaultMaxRetries
	// is the default: 0 means no retry); TimeoutMs its deadline (0: the
	// default, 10000).
	MaxRetries, TimeoutMs int
	// Fault is drawn at Rate for every attempt; with Rate 0 or Fault None
	// Run computes only the worst case.
	Fault transport.Fault
	Rate  float64 // the probability of Fault per attempt
	// Trials is the number of simulated operations (1 to MaxTrials), each
	// in its own runtime with seed Seed+i; the last, Seed+Trials-1, must fit
	// a uint64.
	Trials int
	Seed   uint64 // the first trial's seed
	// Class is the class whose Method the loop calls, with Args as its
	// arguments, in a namespace called Namespace (default "OBJECT").
	// Class and Method are required to simulate (a Rate above 0); the
	// worst case needs neither.
	Method    string
	Class     runtime.Constructor
	Args      []any
	Namespace string
	// Bindings are the classes Class reaches with runtime.Binding(st,
	// NAME), by NAME: each trial defines each as the namespace NAME, so a
	// call of Method may call other objects; what those calls do is
	// counted apart (Result.CallsOut, Result.ExecutionsOut).
	Bindings map[string]runtime.Constructor
	// Progress, if set, is called after each trial.
	Progress func(done, total int)
	// StallLimit is the watchdog's wall-clock stall limit of each trial
	// (runtime.WithStallLimit): 0 takes runtime.DefaultStallLimit, a
	// negative value turns the watchdog off.
	StallLimit time.Duration
}

// Distribution summarises a sample of whole numbers (or durations).
type Distribution struct {
	P50, P99, Max int64   // nearest-rank percentiles and the largest value
	Mean          float64 // the average
	// Counts maps each value to how many trials had it (for histograms of
	// small whole numbers; nil for durations).
	Counts map[int64]int
}

// Result is the worst case and, with a fault rate, the simulated
// distributions.
type Result struct {
	Options Options // as given, defaults filled in
	// Worst is the most attempts that can reach the object for one
	// operation: Outer × (MaxRetries+1) (see Worst).
	Worst int
	// Simulated is false when no fault rate was given.
	Simulated bool
	// Per operation (the whole application loop): stub attempts, attempts
	// that reached the object, executions of the method.
	Attempts, Deliveries, Executions Distribution
	// Calls counts the stub calls the loop made per operation.
	Calls Distribution
	// CallsOut counts the calls the object made to other objects (through
	// Options.Bindings) per operation, ExecutionsOut the executions they
	// caused there: the loop's retries times theirs, one hop on.
	CallsOut, ExecutionsOut Distribution
	// OperationLatency is the virtual time of the whole loop;
	// CallLatency that of each stub call (nanoseconds).
	OperationLatency, CallLatency Distribution
	// Failed counts the operations whose every outer attempt failed.
	Failed int
}

// Run computes the worst case of rule S15 and, when a fault rate is
// given, simulates Trials operations to measure how often the object is
// reached and how long operations take. Trial i runs with seed Seed+i, so
// the same options give the same result.
func Run(opts Options) (*Result, error) {
	if opts.TimeoutMs == 0 {
		opts.TimeoutMs = stub.DefaultTimeoutMs
	}
	worst, err := Worst(opts.Outer, opts.MaxRetries)
	if err != nil {
		return nil, err
	}
	if opts.Outer > MaxOuter {
		return nil, fmt.Errorf("amplify: outer is %d: %w: must be at most %d", opts.Outer, stub.ErrRange, MaxOuter)
	}
	stubOpts, err := stub.ParseOptions(map[string]any{"maxRetries": opts.MaxRetries, "timeoutMs": opts.TimeoutMs})
	if err != nil {
		return nil, fmt.Errorf("amplify: %w", err)
	}
	for name, c := range opts.Bindings {
		if c == nil || name == "" || name == opts.Namespace {
			return nil, fmt.Errorf("amplify: binding %q: want a name other than the class's namespace and a class", name)
		}
	}
	if opts.Class != nil {
		if opts.Method == "" {
			return nil, errors.New("amplify: Method is empty: name the method of Class the loop calls")
		}
		if opts.Namespace == "" {
			opts.Namespace = "OBJECT"
		}
	}
	res := &Result{Options: opts, Worst: worst}
	if opts.Rate == 0 || opts.Fault == transport.None {
		return res, nil
	}
	if opts.Class == nil {
		return nil, errors.New("amplify: Class is nil: to simulate, give the class whose Method the loop calls (the demo's: Class examples.NewInventory, Method \"SetQuantity\", Args [\"apple\", 1])")
	}
	if opts.Fault.OnConnection() {
		return nil, fmt.Errorf("amplify: fault %v strikes a WebSocket connection, not an attempt: amplify draws a fault for every attempt", opts.Fault)
	}
	plan := transport.Random(transport.Rates{opts.Fault: opts.Rate})
	if err := plan.Validate(); err != nil {
		return nil, fmt.Errorf("amplify: %w", err)
	}
	if opts.Trials < 1 || opts.Trials > MaxTrials {
		return nil, fmt.Errorf("amplify: trials is %d: %w: must be from 1 to %d", opts.Trials, stub.ErrRange, MaxTrials)
	}
	if last := uint64(opts.Trials - 1); opts.Seed > math.MaxUint64-last {
		return nil, fmt.Errorf("amplify: seed %d with %d trials: %w: the last trial's seed, Seed+Trials-1, overflows a uint64", opts.Seed, opts.Trials, stub.ErrRange)
	}
	res.Simulated = true
	var attempts, deliveries, executions, calls, callsOut, execsOut, opLat, callLat []int64
	for i := range opts.Trials {
		t, err := amplifyTrial(opts, plan, stubOpts, opts.Seed+uint64(i))
		if err != nil {
			return nil, err
		}
		attempts = append(attempts, int64(t.attempts))
		deliveries = append(deliveries, int64(t.deliveries))
		executions = append(executions, int64(t.executions))
		calls = append(calls, int64(t.calls))
		callsOut, execsOut = append(callsOut, int64(t.callsOut)), append(execsOut, int64(t.execsOut))
		opLat = append(opLat, int64(t.latency))
		callLat = append(callLat, t.callLatencies...)
		if !t.ok {
			res.Failed++
		}
		if opts.Progress != nil {
			opts.Progress(i+1, opts.Trials)
		}
	}
	res.Attempts, res.Deliveries, res.Executions, res.Calls = summarize(attempts, true), summarize(deliveries, true), summarize(executions, true), summarize(calls, true)
	res.CallsOut, res.ExecutionsOut = summarize(callsOut, true), summarize(execsOut, true)
	res.OperationLatency, res.CallLatency = summarize(opLat, false), summarize(callLat, false)
	return res, nil
}

type trial struct {
	attempts, deliveries, executions, calls int
	callsOut, execsOut                      int // of the object's calls to other objects
	latency                                 time.Duration
	callLatencies                           []int64
	ok                                      bool
}

func amplifyTrial(opts Options, plan *transport.FaultPlan, stubOpts []stub.Option, seed uint64) (trial, error) {
	var t trial
	rt := runtime.New(runtime.WithSeed(seed), runtime.WithFaults(plan), runtime.WithStallLimit(cmp.Or(opts.StallLimit, runtime.DefaultStallLimit)))
	defer rt.Close()
	for _, name := range slices.Sorted(maps.Keys(opts.Bindings)) {
		rt.Namespace(name, opts.Bindings[name])
	}
	ns := rt.Namespace(opts.Namespace, opts.Class)
	s, err := ns.GetByName("shop", stubOpts...)
	if err != nil {
		return t, fmt.Errorf("amplify: %w", err)
	}
	err = rt.Run(func(ctx context.Context) error {
		for k := range opts.Outer {
			if k > 0 {
				// A failed call broke the stub (rule L2): each outer
				// attempt takes a fresh one, as the platform advises.
				if s, err = ns.GetByName("shop", stubOpts...); err != nil {
					return err
				}
			}
			if _, err := s.Call(ctx, opts.Method, opts.Args...); err == nil {
				t.ok = true
				break
			}
		}
		t.latency = rt.Elapsed()
		return nil
	})
	if err != nil {
		return t, fmt.Errorf("amplify (seed %d): %w: %w", seed, ErrRun, err)
	}
	for _, c := range rt.Calls() {
		if c.By != "" { // an object's call to another, one hop on
			t.callsOut++
			t.execsOut += c.Executions()
			continue
		}
		t.calls++
		t.attempts += len(c.Attempts)
		t.executions += c.Executions()
		for _, a := range c.Attempts {
			if a.Delivered {
				t.deliveries++
			}
		}
		t.callLatencies = append(t.callLatencies, int64(c.End-c.Start))
	}
	return t, nil
}

// summarize computes the percentiles (nearest rank), maximum and mean.
func summarize(v []int64, counts bool) Distribution {
	var d Distribution
	if len(v) == 0 {
		return d
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := func(p float64) int64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	d.P50, d.P99, d.Max = rank(0.50), rank(0.99), s[len(s)-1]
	sum := 0.0
	for _, x := range s {
		sum += float64(x)
	}
	d.Mean = sum / float64(len(s))
	if counts {
		d.Counts = map[int64]int{}
		for _, x := range s {
			d.Counts[x]++
		}
	}
	return d
}
