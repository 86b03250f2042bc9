package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/spf13/cobra"
)

// runCmd is dosim run's options.
type runCmd struct {
	a             *app
	format, color string
	seed          uint64
	seedGiven     bool // --seed was given: it replaces each scenario's own
	files         []string
	scs           []*scenario.Scenario // the files, loaded by validate
}

func (a *app) newRun() *cobra.Command {
	o := &runCmd{a: a}
	cmd := &cobra.Command{
		Use:   "run FILE...",
		Short: "Run scenario files and show what happened to every call",
		Long: `Run one or more scenario files (YAML, documented in docs/scenarios.md) and show
every call and attempt: a timeline by default, or JSON call records, a Mermaid
sequence diagram, or a self-contained HTML page with an SVG timeline.

--format json always writes one JSON array with a report per file, in the
order given, even for one file (jq '.[0].calls').

Every file is checked before anything runs: malformed YAML, an unknown field,
class, method or fault, or an option of the wrong type or out of range is
reported as FILE:LINE: field: what is wrong and what is allowed, and exits 2.
A scenario whose expectations are not all met prints what was expected beside
what happened and exits 1.` + runExitCodesHelp,
		Example: a.example(`  dosim run testdata/scenarios/ambiguous-delivery.yaml
  dosim run --format html testdata/scenarios/*.yaml > timeline.html
  dosim run --seed 42 --format json testdata/scenarios/overloaded.yaml`, `  dosim run FILE
  dosim run --format html FILE... > timeline.html
  dosim run --seed 42 --format json FILE`),
		Args: cobra.MinimumNArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVarP(&o.format, "format", "f", "text", "output format: text, json, jsonl (one JSON call record a line, written as each call ends), mermaid, html or chrome-trace (Trace Event JSON for Perfetto and the Performance panel of Chrome's DevTools)")
	cmd.Flags().StringVar(&o.color, "color", "auto", "colour the text timeline: auto (on a terminal, unless NO_COLOR is set), always or never")
	cmd.Flags().Uint64Var(&o.seed, "seed", 0, "run with this seed instead of each scenario's own")
	return cmd
}

func (o *runCmd) bind(files []string, given func(string) bool) {
	o.files, o.seedGiven = files, given("seed")
}

// validate checks the flags and loads every file first: bad input
// anywhere, and nothing runs.
func (o *runCmd) validate() error {
	if o.format != "jsonl" {
		if checkFormat(o.format) != nil {
			return usageErrorf("--format: %s is not a format%s; allowed are %s, jsonl", quote.Q(o.format), didYouMean(o.format, append(slices.Clone(formats), "jsonl")), strings.Join(formats, ", "))
		}
	}
	if err := checkColor(o.color); err != nil {
		return err
	}
	var errs []error
	for _, f := range o.files {
		sc, err := o.a.loadScenario(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		o.scs = append(o.scs, sc)
	}
	if len(errs) > 0 {
		return &codeError{code: exitUsage, msg: errors.Join(errs...).Error()}
	}
	return nil
}

// run runs each scenario, writes the reports and says which expectations
// were not met.
func (o *runCmd) run(e env) error {
	opts := []scenario.RunOption{scenario.StallLimit(o.a.stall)}
	if o.seedGiven {
		opts = append(opts, scenario.Seed(o.seed))
	}
	reports := make([]render.Report, 0, len(o.scs))
	failed := 0
	for _, sc := range o.scs {
		var lines *jsonLines
		runOpts := opts
		if o.format == "jsonl" {
			lines = newJSONLines(e.out, sc)
			if o.seedGiven {
				lines.seed = o.seed
			}
			runOpts = append(slices.Clip(opts), scenario.RecordSink(lines.write))
		}
		res, err := sc.Run(runOpts...)
		if lines != nil && lines.err != nil {
			return &codeError{code: exitUsage, err: lines.err} // Main says the output could not be written
		}
		if err != nil {
			return simulationError(err)
		}
		reports = append(reports, res.Report())
		if !res.Passed() {
			failed++
		}
	}
	if o.format != "jsonl" { // jsonl was written as the calls ended
		if err := writeReports(e.out, o.format, useColor(o.color, e.out), reports); err != nil {
			return err
		}
	}
	if failed == 0 {
		return nil
	}
	for _, r := range reports {
		if len(r.Failures) == 0 {
			continue
		}
		fmt.Fprintf(e.errw, "%s: %s (seed %d): %d of %d expectations not met\n", o.a.name, render.Escape(r.File), r.Seed, len(r.Failures), r.Expectations)
		if o.format != "text" { // the text timeline already lists them
			for _, f := range r.Failures {
				fmt.Fprintf(e.errw, "  %s\n", render.Escape(f.String()))
			}
		}
	}
	return &codeError{code: exitExpect}
}

// jsonLines writes dosim run --format jsonl: one JSON object a line per
// call, as the call ends: the scenario's name, file and seed, then the
// call as --format json writes it (n counts calls in the order they
// ended). The first write error stops the writing and is kept.
type jsonLines struct {
	enc        *json.Encoder
	name, file string
	seed       uint64
	n          int
	err        error
}

func newJSONLines(w io.Writer, sc *scenario.Scenario) *jsonLines {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &jsonLines{enc: enc, name: sc.Name, file: sc.File, seed: sc.Seed}
}

// jsonLine is one line of --format jsonl.
type jsonLine struct {
	Scenario string `json:"scenario"`
	File     string `json:"file,omitempty"`
	Seed     uint64 `json:"seed"`
	render.JSONCall
}

func (l *jsonLines) write(c runtime.CallRecord) {
	if l.err != nil {
		return
	}
	l.n++
	call := render.ToJSON(render.Report{Name: l.name, Seed: l.seed, Calls: []runtime.CallRecord{c}}).Calls[0]
	call.N = l.n
	l.err = l.enc.Encode(jsonLine{Scenario: l.name, File: l.file, Seed: l.seed, JSONCall: call})
}
