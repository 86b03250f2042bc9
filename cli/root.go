package cli

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"github.com/spf13/cobra"
)

// exitCodes is the exit-code section of a command's help; one says what
// exit code 1 means for that command.
func exitCodes(one string) string {
	return `

Exit codes:
  0  ok
  1  ` + one + `
  2  a usage or input error (a bad flag, a bad scenario file, a failed write)
  3  the simulation itself failed (a bug: please report it with the seed)`
}

// The exit-code sections of the commands' help.
var (
	runExitCodesHelp     = exitCodes("an expectation failed, or the objects' code stopped the run (a method blocked\n     outside the simulation past --stall-limit, or called runtime.Goexit)")
	exploreExitCodesHelp = exitCodes("a violation was found (an S-rule invariant, an explore.expect expectation\n     or linearizability failed on some seed)")
	mergeExitCodesHelp   = exitCodes("a shard found a violation")
	verifyExitCodesHelp  = exitCodes("a method marked Retryable is not idempotent (DANGER)")
	noOneExitCodesHelp   = exitCodes("(not used by this command)")
	amplifyExitCodesHelp = exitCodes("the method's code stopped a trial (it blocked outside the simulation past\n     --stall-limit, or called runtime.Goexit)")
	rootExitCodesHelp    = exitCodes("run: an expectation failed; explore: a violation was found;\n     verify: a method marked Retryable is not idempotent; run, amplify: the\n     objects' code stopped the simulation (a stall, runtime.Goexit)")
)

func (a *app) newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   a.name,
		Short: "A deterministic simulator of Durable-Object-style actors",
		Long: a.name + ` runs Durable-Object-style objects in virtual time from one seed: calls,
retries, lost requests and lost replies, so that a failing seed replays exactly.` + rootExitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.PersistentFlags().DurationVar(&a.stall, "stall-limit", runtime.DefaultStallLimit,
		"end a simulation whose object or test code blocks outside it (a raw channel, a mutex, a real sleep) for this long, in wall-clock time; 0 turns the watchdog off")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if a.stall < 0 {
			return usageErrorf("--stall-limit: %v is negative: want a duration such as 10s, or 0 to turn the watchdog off", a.stall)
		}
		if err := runtime.CheckStallLimit(a.stall); err != nil {
			return usageErrorf("--stall-limit: %v", err)
		}
		return nil
	}
	root.SetFlagErrorFunc(flagError)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(a.newRun(), a.newExplore(), a.newVerify(), a.newAmplify(), a.newVersion())
	if a.demo != nil {
		root.AddCommand(a.newDemo())
	}
	return root
}

func (a *app) newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print " + a.name + "'s version",
		Long: `Print ` + a.name + `'s version: the main module's version as the go command stamped
it (v1.2.3 after go install github.com/dosim/dosim/cmd/dosim@v1.2.3), and the
git commit when built from a checkout ("modified" when it had uncommitted
changes).` + noOneExitCodesHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), a.name, buildVersion())
			return nil
		},
	}
}

// demoProgram is what dosim demo runs: WithBuiltInClasses gives it, so
// that a program without dosim's own classes links none of them.
type demoProgram struct {
	class  runtime.Constructor
	faults func() *transport.FaultPlan
	run    func(ctx context.Context, rt *runtime.Runtime, ns *runtime.Namespace) (map[string]int, error)
}

// demoCmd is dosim demo's options.
type demoCmd struct {
	a             *app
	seed          uint64
	format, color string
}

func (a *app) newDemo() *cobra.Command {
	o := &demoCmd{a: a}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the built-in inventory demo and print every call and attempt",
		Long: `Run the built-in inventory demo: three shops stocked with SetQuantity (marked
Retryable) and bumped by concurrent AddOne calls (not marked), with the first
reply to the "apple" shop lost. The timeline shows each call and attempt;
--format json, mermaid, html or chrome-trace show it another way.` + noOneExitCodesHelp,
		Args: cobra.NoArgs,
		RunE: runE(o),
	}
	cmd.Flags().Uint64Var(&o.seed, "seed", 1, "the simulation's seed")
	cmd.Flags().StringVarP(&o.format, "format", "f", "text", "output format: text, json, mermaid, html or chrome-trace (Trace Event JSON for Perfetto and the Performance panel of Chrome's DevTools)")
	cmd.Flags().StringVar(&o.color, "color", "auto", "colour the text timeline: auto (on a terminal, unless NO_COLOR is set), always or never")
	return cmd
}

func (o *demoCmd) bind([]string, func(string) bool) {}

// validate checks --format and --color.
func (o *demoCmd) validate() error {
	if err := checkFormat(o.format); err != nil {
		return err
	}
	return checkColor(o.color)
}

// run runs the demo and writes its report.
func (o *demoCmd) run(e env) error {
	demo := o.a.demo
	rt := runtime.New(runtime.WithSeed(o.seed), runtime.WithFaults(demo.faults()), runtime.WithStallLimit(o.a.stall))
	defer rt.Close()
	ns := rt.Namespace("INVENTORY", demo.class)
	var stock map[string]int
	err := rt.Run(func(ctx context.Context) error {
		var err error
		stock, err = demo.run(ctx, rt, ns)
		return err
	})
	if err != nil {
		return &codeError{code: exitInternal, msg: fmt.Sprintf("%s demo (seed %d): %v", o.a.name, o.seed, err)}
	}
	shops := make([]string, 0, len(stock))
	for s := range stock {
		shops = append(shops, s)
	}
	sort.Strings(shops)
	report := render.Report{
		Name: "demo",
		Description: "Three shops stocked with SetQuantity (marked Retryable), then bumped by two concurrent\n" +
			"AddOne calls each (not marked); the first replies to the \"apple\" shop are lost.",
		Seed: o.seed, Calls: rt.Calls(), Effects: rt.Effects(),
	}
	args := map[string]string{"SetQuantity": `("stock", 10)`, "AddOne": `("stock")`, "Get": `("stock")`}
	for _, c := range report.Calls {
		report.Labels = append(report.Labels, c.Method+args[c.Method])
	}
	for _, s := range shops {
		id := ns.IDFromName(s)
		report.Storage = append(report.Storage, render.Object{Namespace: ns.Name(), Object: s, Data: ns.Storage(id).Snapshot()})
	}
	return writeReports(e.out, o.format, useColor(o.color, e.out), []render.Report{report})
}
