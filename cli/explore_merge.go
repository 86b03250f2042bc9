package cli

import (
	"fmt"
	"strings"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/render"
	"github.com/spf13/cobra"
)

// mergeCmd is "explore merge"'s options: its flags, and the summaries
// validate read.
type mergeCmd struct {
	a                        *app
	jsonOut                  string
	partial, allowIncomplete bool

	files []string
	js    outputFile
	parts []*explore.Summary
	sum   *explore.Summary
}

// newExploreMerge is "explore merge": shards' summaries made one.
func (a *app) newExploreMerge() *cobra.Command {
	o := &mergeCmd{a: a}
	cmd := &cobra.Command{
		Use:   "merge SUMMARY.json...",
		Short: "Combine the JSON summaries of the shards of one sweep",
		Long: `Combine the --json summaries written by the shards of one sweep into one
report. Each file is checked first: every field in range, its counts adding up,
its violations inside its shards, and its fingerprint (a SHA-256 of every
other field: the scenario file's digest, the seeds, the rates and options, the
shards and every count) matching its fields, so that an edited file is
refused. The files must be of one sweep (the same scenario file, seeds, rates
and options) and hold each shard of one split at most once. When the scenario
file a summary names is there, its bytes must still be those the sweep ran.

A missing shard, or a shard that was interrupted ("complete": false), makes the
merge fail with exit code 2 unless --allow-incomplete; the report then says
the sweep is incomplete and never "clean". Exit code 1 means a shard found a
violation.` + mergeExitCodesHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.jsonOut, "json", "", "also write the merged summary as JSON to this file (- for stdout)")
	cmd.Flags().BoolVar(&o.allowIncomplete, "allow-incomplete", false, "accept missing or interrupted shards: the report says incomplete, never clean")
	cmd.Flags().BoolVar(&o.partial, "partial", false, "the old name of --allow-incomplete")
	_ = cmd.Flags().MarkDeprecated("partial", "use --allow-incomplete")
	return cmd
}

func (o *mergeCmd) bind(files []string, _ func(string) bool) { o.files = files }

// allow reports whether an incomplete sweep is accepted.
func (o *mergeCmd) allow() bool { return o.allowIncomplete || o.partial }

// validate checks --json and reads and merges the summaries.
func (o *mergeCmd) validate() error {
	o.js = outputFile{flag: "--json", path: o.jsonOut, inputs: o.files}
	if o.jsonOut != "" {
		if err := o.js.check(); err != nil {
			return err
		}
	}
	var err error
	o.parts, o.sum, err = mergeFiles(o.files)
	return err
}

// run writes the merged summary and says whether the sweep is whole.
func (o *mergeCmd) run(e env) error {
	out, parts, sum := e.out, o.parts, o.sum
	if o.jsonOut != "" {
		if err := o.js.write(out, sum.WriteJSON); err != nil {
			return err
		}
	}
	if o.jsonOut != "-" {
		o.a.writeSummary(out, sum, true)
	}
	if sum.Total > 0 {
		return &codeError{code: exitExpect}
	}
	if sum.Whole() || o.allow() {
		return nil
	}
	var why []string
	if missing := sum.Missing(); len(missing) > 0 {
		n, names := 0, make([]string, 0, min(len(missing), 10))
		for i, m := range missing {
			n += m.Len()
			if i < 10 {
				names = append(names, m.String())
			}
		}
		why = append(why, fmt.Sprintf("%d of %d shards missing (%s)", n, missing[0].Count, strings.Join(names, ", ")))
	}
	if !sum.Complete {
		var cut []string
		for i, p := range parts {
			if !p.Complete {
				cut = append(cut, fmt.Sprintf("%s ran %d seeds", o.files[i], p.Ran))
			}
		}
		why = append(why, "interrupted shards: "+strings.Join(cut, ", "))
	}
	return usageErrorf("%s: the sweep is incomplete (--allow-incomplete accepts it)", strings.Join(why, "; "))
}

// mergeFiles reads the summary files and merges them, checking the
// scenario file each names against its digest when it is there.
func mergeFiles(files []string) ([]*explore.Summary, *explore.Summary, error) {
	var parts []*explore.Summary
	for _, name := range files {
		s, err := explore.ReadSummaryFile(name)
		if err != nil {
			return nil, nil, usageErrorf("%w", err)
		}
		parts = append(parts, s)
	}
	sum, err := explore.Merge(parts...)
	if err != nil {
		return nil, nil, usageErrorf("%w", err)
	}
	checked := map[string]bool{}
	for _, p := range parts {
		if checked[p.File] {
			continue
		}
		checked[p.File] = true
		if err := p.CheckScenarioFile(); err != nil {
			return nil, nil, usageErrorf("%w", err)
		}
	}
	return parts, sum, nil
}

// replayCommand is the command that replays seed of the sweep, spelt with
// the program's name.
func (a *app) replayCommand(sum *explore.Summary, seed uint64) string {
	cmd := render.Escape(sum.ReplayCommand(seed))
	if rest, ok := strings.CutPrefix(cmd, "dosim "); ok {
		return a.name + " " + rest
	}
	return cmd
}
