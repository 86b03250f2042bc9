package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dosim/dosim/amplify"
	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/spf13/cobra"
)

// progressMin is the number of trials from which amplify shows its
// progress: a bar on a terminal, else a line every progressEvery.
const progressMin = 2000

// amplifyCmd is dosim amplify's options: its flags, and what validate
// made of them.
type amplifyCmd struct {
	a                                    *app
	outer, maxRetries, timeoutMs, trials int
	fault, method, class, argsFlag       string
	binds                                []string // --bind NAME=CLASS
	rate                                 float64
	seed                                 uint64

	given  func(flag string) bool
	opts   amplify.Options
	target string // what the loop calls, as printed: INVENTORY.SetQuantity
	marked bool   // the target is marked Retryable
}

func (a *app) newAmplify() *cobra.Command {
	o := &amplifyCmd{a: a}
	cmd := &cobra.Command{
		Use:   "amplify --outer K [--max-retries N] [--timeout-ms T] [--fault F --rate P --trials M] [--class C --method M --args JSON]",
		Short: "Show how retries multiply with an application's own loop (rule S15)",
		Long: `Show how retries multiply: an application loop that makes K outer attempts of
an operation, each a call through a stub that itself retries N times, can reach
the object up to K × (N+1) times (rule S15).

With --fault and --rate, also simulate M operations, each in its own runtime
with its own seed (--seed, --seed+1, ...): every attempt meets the fault with
probability P. The loop calls METHOD of --class CLASS (in namespace CLASS in
capitals) with --args, else with the class's sample arguments (object.Sampler).
` + a.amplifyDefault() + ` It prints the distribution of attempts, deliveries
and executions per operation and the virtual latency of calls and operations
(p50, p99, max). When M is at least ` + fmt.Sprint(progressMin) + `, progress goes to stderr: a bar
on a terminal, else a line every ` + progressEvery.String() + ` (trials done, trials per second).

A class that calls other objects through runtime.Binding(st, NAME) gets each
with --bind NAME=CLASS: every trial defines CLASS as the namespace NAME, and
the object's calls to it are counted apart (calls out, executions out: the
retries multiply once more on that hop).` + amplifyExitCodesHelp,
		Example: a.example(`  dosim amplify --outer 3
  dosim amplify --outer 3 --fault lose-response --rate 0.3 --trials 10000`, `  dosim amplify --outer 3
  dosim amplify --outer 3 --class CLASS --method METHOD --args '["a string", 7]' --fault lose-response --rate 0.3`),
		Args: cobra.NoArgs,
		RunE: runE(o),
	}
	f := cmd.Flags()
	f.IntVar(&o.outer, "outer", 0, "attempts of the application's own loop around the stub call (required)")
	f.IntVar(&o.maxRetries, "max-retries", stub.DefaultMaxRetries, "the stub's maxRetries option (0 to 10)")
	f.IntVar(&o.timeoutMs, "timeout-ms", stub.DefaultTimeoutMs, "the stub's timeoutMs option (500 to 60000)")
	f.StringVar(&o.fault, "fault", "", "the fault drawn for every attempt (not-delivered, lose-request, lose-while-running, lose-response, overloaded, fail-after-delivery)")
	f.Float64Var(&o.rate, "rate", 0, "the probability of the fault per attempt")
	f.IntVar(&o.trials, "trials", 1000, "simulated operations")
	f.Uint64Var(&o.seed, "seed", 1, "the first trial's seed; trial i uses seed+i")
	f.StringVar(&o.class, "class", "", "the class whose method the loop calls"+a.ifInventory(" (default: the built-in inventory)", " (required with --fault)"))
	f.StringVar(&o.method, "method", a.ifInventory("SetQuantity", ""), "the method the loop calls"+a.ifInventory(": for the inventory, SetQuantity (marked Retryable) or AddOne (not marked)", " (required with --class)"))
	f.StringArrayVar(&o.binds, "bind", nil, "NAME=CLASS: define CLASS as the namespace NAME in every trial, for the class to reach with runtime.Binding(st, NAME); its calls out are counted apart (repeat for several)")
	f.StringVar(&o.argsFlag, "args", "", "the method's arguments, as a JSON array such as '[\"tx-1\", 50]' (default: the class's sample for the method, object.Sampler)")
	return cmd
}

func (o *amplifyCmd) bind(_ []string, given func(string) bool) { o.given = given }

// validate checks the flags and picks what the loop calls.
func (o *amplifyCmd) validate() error {
	if !o.given("outer") {
		return usageErrorf("amplify: --outer is required: the number of attempts of the application's own loop (1 to %d)", amplify.MaxOuter)
	}
	if o.outer < 1 || o.outer > amplify.MaxOuter {
		return usageErrorf("amplify: --outer: %d is out of range: want an integer from 1 to %d", o.outer, amplify.MaxOuter)
	}
	if _, err := stub.ParseOptions(map[string]any{"maxRetries": o.maxRetries, "timeoutMs": o.timeoutMs}); err != nil {
		return usageErrorf("amplify: %w", err)
	}
	o.opts = amplify.Options{Outer: o.outer, MaxRetries: o.maxRetries, TimeoutMs: o.timeoutMs, Trials: o.trials, Seed: o.seed, Method: o.method,
		StallLimit: o.a.stallOption()}
	if err := checkTrials(o.given, o.trials, o.seed); err != nil {
		return err
	}
	if err := o.faultFlags(); err != nil {
		return err
	}
	o.target, o.marked = "INVENTORY."+o.method, o.method != "AddOne"
	if o.class == "" && o.a.builtIns["inventory"] && o.argsFlag == "" {
		if !slices.Contains([]string{"SetQuantity", "AddOne"}, o.method) {
			return usageErrorf("amplify: --method: %s: allowed are SetQuantity (marked Retryable) and AddOne (not marked)", quote.Q(o.method))
		}
		o.opts.Class, o.opts.Namespace, o.opts.Args = o.a.classes["inventory"], "INVENTORY", inventoryArgs[o.method]
	} else if o.opts.Rate > 0 || o.class != "" || o.argsFlag != "" {
		var err error
		if o.target, o.marked, err = o.a.amplifyClass(&o.opts, o.class, o.given("method"), o.argsFlag); err != nil {
			return err
		}
	}
	return o.bindFlags()
}

// bindFlags reads --bind NAME=CLASS into the options' bindings.
func (o *amplifyCmd) bindFlags() error {
	for _, b := range o.binds {
		name, class, ok := strings.Cut(b, "=")
		if !ok || name == "" || class == "" {
			return usageErrorf("amplify: --bind %s: want NAME=CLASS, such as BILLING=billing: the binding's name and a registered class", quote.Q(b))
		}
		if _, dup := o.opts.Bindings[name]; dup {
			return usageErrorf("amplify: --bind: binding %s given twice", quote.Q(name))
		}
		if name == o.opts.Namespace {
			return usageErrorf("amplify: --bind %s: %s is the namespace of the class the loop calls: name the binding otherwise", quote.Q(b), name)
		}
		c, err := o.a.lookupClass(class)
		if err != nil {
			return usageErrorf("amplify: --bind %s: %w", quote.Q(b), err)
		}
		if o.opts.Bindings == nil {
			o.opts.Bindings = map[string]runtime.Constructor{}
		}
		o.opts.Bindings[name] = c.new
	}
	return nil
}

// faultFlags checks --fault and --rate, which go together.
func (o *amplifyCmd) faultFlags() error {
	if o.fault == "" && !o.given("rate") {
		return nil
	}
	if o.fault == "" || !o.given("rate") {
		return usageErrorf("amplify: --fault and --rate go together: name the fault and its probability per attempt")
	}
	f, err := transport.ParseFault(o.fault)
	if err != nil || f == transport.None || f.OnConnection() {
		names := namesOf(transport.AttemptFaults()) // what amplify draws
		return usageErrorf("amplify: --fault: unknown fault %s%s; allowed are %s", quote.Q(o.fault), didYouMean(o.fault, names), strings.Join(names, ", "))
	}
	if !(o.rate > 0 && o.rate <= 1) {
		return usageErrorf("amplify: --rate: %v is out of range: want a probability above 0, at most 1", o.rate)
	}
	o.opts.Fault, o.opts.Rate = f, o.rate
	return nil
}

// run simulates the trials and prints the result.
func (o *amplifyCmd) run(e env) error {
	var bar *progress
	if o.opts.Rate > 0 && o.trials >= progressMin {
		bar = newProgress(e.errw, "amplify", "trials", o.trials)
		o.opts.Progress = func(done, _ int) { bar.update(done, -1) }
	}
	res, err := amplify.Run(o.opts)
	bar.done()
	if err != nil {
		return simulationError(err)
	}
	writeAmplify(e.out, res, o.target, o.marked)
	return nil
}

// checkTrials checks --trials and --seed: in range, the last trial's seed
// within a uint64 (it wrapped to 0, where explore refuses), and given only
// with --fault and --rate, which make amplify simulate (they were
// accepted, and ignored, without them).
func checkTrials(given func(flag string) bool, trials int, seed uint64) error {
	simulate := given("fault") || given("rate")
	for _, name := range []string{"trials", "seed"} {
		if given(name) && !simulate {
			return usageErrorf("amplify: --%s: it chooses the simulated operations, which only --fault and --rate start: give them too, or drop --%s", name, name)
		}
	}
	if trials < 1 || trials > amplify.MaxTrials {
		return usageErrorf("amplify: --trials: %d is out of range: want an integer from 1 to %d", trials, amplify.MaxTrials)
	}
	if last := uint64(trials - 1); seed > math.MaxUint64-last {
		return usageErrorf("amplify: --seed %d with --trials %d: the last trial's seed, seed+trials-1, overflows a uint64: want a seed of at most %d", seed, trials, uint64(math.MaxUint64)-last)
	}
	return nil
}

// inventoryArgs are the arguments amplify passes the built-in inventory's
// methods.
var inventoryArgs = map[string][]any{"SetQuantity": {"apple", 1}, "AddOne": {"apple"}}

// ifInventory is builtIn when the built-in inventory is amplify's default
// class, else other.
func (a *app) ifInventory(builtIn, other string) string {
	if a.builtIns["inventory"] {
		return builtIn
	}
	return other
}

// amplifyDefault says what amplify calls without --class.
func (a *app) amplifyDefault() string {
	return a.ifInventory(`Without --class, INVENTORY.SetQuantity (marked Retryable, so every delivery
runs it) or, with --method AddOne, an unmarked method whose duplicates are
refused.`, `--class and --method are required to simulate.`)
}

// amplifyClass sets opts to call a registered class's method, and returns
// the target as printed ("WALLET.Deposit") and whether it is marked.
func (a *app) amplifyClass(opts *amplify.Options, class string, methodGiven bool, argsFlag string) (string, bool, error) {
	if class == "" {
		if a.builtIns["inventory"] {
			class = "inventory"
		} else {
			return "", false, usageErrorf("amplify: --class is required to simulate: name the class whose method the loop calls; %s", a.registered())
		}
	}
	c, err := a.lookupClass(class)
	if err != nil {
		return "", false, err
	}
	if !methodGiven && !(class == "inventory" && a.builtIns["inventory"]) {
		return "", false, usageErrorf("amplify: --method is required with --class %s: one of %s", class, strings.Join(c.methodNames(), ", "))
	}
	m, ok := c.methods[opts.Method]
	if !ok {
		return "", false, usageErrorf("amplify: --method: class %s has no method %s%s; it has %s", class, quote.Q(opts.Method), didYouMean(opts.Method, c.methodNames()), strings.Join(c.methodNames(), ", "))
	}
	sample, ok := c.samples[opts.Method]
	from := "amplify: the class's sample (object.Sampler)"
	if argsFlag != "" {
		args, err := decodeArgs(argsFlag)
		if err != nil {
			return "", false, usageErrorf("amplify: --args: %w", err)
		}
		sample.Args, ok, from = args, true, "amplify: --args"
	}
	if n := c.arity(opts.Method); !ok && n != 0 {
		return "", false, usageErrorf("amplify: %s.%s takes %s and none were given: pass --args '[...]', or have the class give samples by implementing object.Sampler (a method VerifySamples() map[string]object.Sample with an entry for %q)",
			class, opts.Method, plural(n, "argument"), opts.Method)
	}
	if err := checkArgs(from, class, opts.Method, m, sample.Args); err != nil {
		return "", false, err
	}
	opts.Class, opts.Args, opts.Namespace = c.new, sample.Args, strings.ToUpper(class)
	return opts.Namespace + "." + opts.Method, m.IsRetryable(), nil
}

// writeAmplify prints the result of a loop calling target (such as
// INVENTORY.SetQuantity), marked Retryable or not.
func writeAmplify(w io.Writer, r *amplify.Result, target string, isMarked bool) {
	o := r.Options
	fmt.Fprintf(w, "Worst case (rule S15): %d outer attempts × (%d retries + 1) = %d attempts can reach the object for one operation.\n",
		o.Outer, o.MaxRetries, r.Worst)
	if !r.Simulated {
		fmt.Fprintln(w, "Add --fault F --rate P to simulate how often that happens.")
		return
	}
	marked := "marked Retryable: every delivery runs it"
	if !isMarked {
		marked = "not marked: a duplicate delivery is refused"
	}
	fmt.Fprintf(w, "\nSimulated %d operations (seeds %d to %d): %s at rate %g on every attempt;\n", o.Trials, o.Seed, o.Seed+uint64(o.Trials)-1, o.Fault, o.Rate)
	fmt.Fprintf(w, "each an application loop of up to %d calls of %s (%s),\n", o.Outer, target, marked)
	fmt.Fprintf(w, "through a stub with maxRetries %d and timeoutMs %d. Times are virtual.\n\n", o.MaxRetries, o.TimeoutMs)
	fmt.Fprintf(w, "per operation         p50    p99    max   mean\n")
	row := func(name string, d amplify.Distribution) {
		fmt.Fprintf(w, "  %-18s %5d  %5d  %5d  %5.2f\n", name, d.P50, d.P99, d.Max, d.Mean)
	}
	row("stub calls", r.Calls)
	row("attempts", r.Attempts)
	row("reached the object", r.Deliveries)
	row("executions", r.Executions)
	if len(o.Bindings) > 0 { // one hop on: the object's calls to the bound objects
		row("calls out", r.CallsOut)
		row("executions out", r.ExecutionsOut)
	}
	lat := func(name string, d amplify.Distribution) {
		fmt.Fprintf(w, "  %-18s p50 %s, p99 %s, max %s\n", name,
			render.Ms(time.Duration(d.P50)), render.Ms(time.Duration(d.P99)), render.Ms(time.Duration(d.Max)))
	}
	fmt.Fprintln(w, "\nlatency")
	lat("stub call", r.CallLatency)
	lat("operation", r.OperationLatency)
	pct := 100 * float64(r.Failed) / float64(o.Trials)
	fmt.Fprintf(w, "\noperations that failed all %d outer attempts: %d (%.2f%%)\n", o.Outer, r.Failed, pct)

	fmt.Fprintln(w, "\nexecutions per operation")
	var vals []int64
	for v := range r.Executions.Counts {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	most := 0
	for _, n := range r.Executions.Counts {
		most = max(most, n)
	}
	for _, v := range vals {
		n := r.Executions.Counts[v]
		bar := strings.Repeat("█", max(1, n*40/most))
		fmt.Fprintf(w, "  %3d  %-40s  %d (%.2f%%)\n", v, bar, n, 100*float64(n)/float64(o.Trials))
	}
}
