package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/verify"
	"github.com/spf13/cobra"
)

func newVerify() *cobra.Command {
	var (
		argFlags []string
		scenFile string
		showDiff bool
	)
	cmd := &cobra.Command{
		Use:   "verify [CLASS...]",
		Short: "Check that methods marked Retryable are safe to run twice",
		Long: `For every method of the built-in classes named (by default those of the
--scenario file's namespaces, else all of them; each class once), run it
once and, separately, twice for one request (a lost reply, then the duplicate
delivery a retry brings), from the same storage, and compare the result, the
storage and the side effects. The verdicts:

  ok                                 the mark (or its absence) is right
  DANGER: marked but not idempotent  a retry changes the outcome: unmark it, or fix it
  could be marked                    running it twice is the same as once

Arguments come from --args METHOD=JSON-ARRAY, else from the first call of the
method in --scenario FILE, else from the class's own samples. An --args that
names no method of a class being verified is an error (exit 2).` + verifyExitCodesHelp,
		Example: `  dosim verify
  dosim verify mailer ledger
  dosim verify inventory --args 'SetQuantity=["pear", 7]'
  dosim verify --scenario testdata/scenarios/mailer-vs-ledger.yaml`,
		RunE: func(cmd *cobra.Command, names []string) error {
			var sc *scenario.Scenario
			if scenFile != "" {
				var err error
				if sc, err = loadScenario(scenFile); err != nil {
					return &codeError{code: exitUsage, msg: err.Error()}
				}
			}
			classes, err := pickClasses(names, sc)
			if err != nil {
				return err
			}
			given, err := parseArgFlags(argFlags)
			if err != nil {
				return err
			}
			if err := checkArgFlags(given, classes); err != nil {
				return err
			}
			var fromScenario map[string][]any
			if sc != nil {
				fromScenario = map[string][]any{}
				for _, c := range sc.Calls() {
					k := c.Stub.Namespace.Class.Name + "." + c.Method
					if _, seen := fromScenario[k]; !seen && c.Fetch == nil {
						fromScenario[k] = c.Args
					}
				}
			}
			out := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CLASS\tMETHOD\tARGS\tMARKED\tIDEMPOTENT\tVERDICT")
			danger := 0
			var diffs []string
			for _, c := range classes {
				rt := runtime.New()
				ns := rt.Namespace(c.Name, c.New)
				ms, err := ns.Methods(ns.IDFromName("verify"))
				if err != nil {
					rt.Close()
					return &codeError{code: exitInternal, msg: "dosim: " + err.Error()}
				}
				for _, m := range slices.Sorted(maps.Keys(ms)) {
					sample := c.Samples[m]
					if a, ok := fromScenario[c.Name+"."+m]; ok {
						sample.Args = a
					}
					if a, ok := given[c.Name+"."+m]; ok {
						sample.Args = a
					} else if a, ok := given[m]; ok {
						sample.Args = a
					}
					rep, err := verify.Idempotent(ns, m, sample.Args, verify.Options{Snapshot: sample.Storage})
					if err != nil {
						rt.Close()
						return usageErrorf("%v", err)
					}
					args := render.Value(sample.Args)
					if sample.Args == nil {
						args = "[]"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, m, args, yesNo(rep.Marked), yesNo(rep.Idempotent), rep.Verdict)
					if rep.Verdict == verify.VerdictDanger {
						danger++
					}
					if rep.Diff != "" && (showDiff || rep.Verdict == verify.VerdictDanger) {
						lines := strings.Split(strings.TrimRight(rep.Diff, "\n"), "\n")
						for i, l := range lines {
							lines[i] = render.Escape(l)
						}
						diffs = append(diffs, fmt.Sprintf("%s.%s, once vs twice:\n  %s", c.Name, m, strings.Join(lines, "\n  ")))
					}
				}
				rt.Close()
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, d := range diffs {
				fmt.Fprintf(out, "\n%s\n", d)
			}
			if danger > 0 {
				return &codeError{code: exitExpect}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&argFlags, "args", nil, "arguments of a method, as METHOD=JSON-ARRAY or CLASS.METHOD=JSON-ARRAY (repeatable)")
	cmd.Flags().StringVar(&scenFile, "scenario", "", "take arguments from the calls of this scenario")
	cmd.Flags().BoolVar(&showDiff, "diff", false, "show how twice differed from once for every method, not only the dangerous ones")
	return cmd
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// pickClasses returns the classes named, each once, in the order first
// named; with none named, the classes of the scenario's namespaces when
// there is one, else every built-in class.
func pickClasses(names []string, sc *scenario.Scenario) ([]examples.Class, error) {
	if len(names) == 0 && sc != nil {
		for _, ns := range sc.Namespaces {
			names = append(names, ns.Class.Name)
		}
	}
	if len(names) == 0 {
		return examples.Classes(), nil
	}
	var out []examples.Class
	seen := map[string]bool{}
	for _, n := range names {
		c, ok := examples.LookupClass(n)
		if !ok {
			return nil, usageErrorf("unknown class %q; the built-in classes are %s", n, strings.Join(examples.ClassNames(), ", "))
		}
		if seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		out = append(out, c)
	}
	return out, nil
}

// methodNames lists a class's methods, sorted.
func methodNames(c examples.Class) []string {
	return slices.Sorted(maps.Keys(c.New(new(object.State)).Methods()))
}

// checkArgFlags checks that every --args names a method of a class being
// verified (METHOD: of at least one; CLASS.METHOD: of that class), so that
// none is silently ignored.
func checkArgFlags(given map[string][]any, classes []examples.Class) error {
	methods := map[string][]string{}
	var verified []string
	for _, c := range classes {
		methods[c.Name] = methodNames(c)
		verified = append(verified, fmt.Sprintf("%s (%s)", c.Name, strings.Join(methods[c.Name], ", ")))
	}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		cname, m, qualified := strings.Cut(k, ".")
		if !qualified {
			m = k
			found := false
			for _, ms := range methods {
				found = found || slices.Contains(ms, m)
			}
			if !found {
				return usageErrorf("--args %s: no class verified has a method %q; verified are %s", k, m, strings.Join(verified, "; "))
			}
			continue
		}
		c, ok := examples.LookupClass(cname)
		if !ok {
			return usageErrorf("--args %s: unknown class %q; the built-in classes are %s", k, cname, strings.Join(examples.ClassNames(), ", "))
		}
		ms, selected := methods[c.Name]
		if !selected {
			return usageErrorf("--args %s: class %s is not being verified (verified are %s); name it: dosim verify %s",
				k, c.Name, strings.Join(slices.Sorted(maps.Keys(methods)), ", "), c.Name)
		}
		if !slices.Contains(ms, m) {
			return usageErrorf("--args %s: class %s has no method %q; it has %s", k, c.Name, m, strings.Join(ms, ", "))
		}
	}
	return nil
}

// parseArgFlags reads --args METHOD=JSON-ARRAY values.
func parseArgFlags(flags []string) (map[string][]any, error) {
	out := map[string][]any{}
	for _, f := range flags {
		name, raw, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, usageErrorf("--args %q: want METHOD=JSON-ARRAY, such as 'SetQuantity=[\"apple\", 3]'", f)
		}
		var args []any
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			return nil, usageErrorf("--args %s: %q is not a JSON array: %v", name, raw, err)
		}
		out[name] = args
	}
	return out, nil
}
