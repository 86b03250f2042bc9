package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/verify"
)

// verifyNamespaces defines the namespace each class is checked in, by
// class name. With a scenario, its namespaces are defined together in one
// runtime, under the file's names and storage, so that a class that calls
// another through runtime.Binding finds it (verify defines the bound
// namespaces in each of its worlds); a class the file does not name, and
// every class without a file, is in a runtime of its own. closeAll closes
// every runtime made.
func verifyNamespaces(classes []verifyClass, sc *scenario.Scenario) (namespaces map[string]*runtime.Namespace, closeAll func()) {
	namespaces = map[string]*runtime.Namespace{}
	var rts []*runtime.Runtime
	closeAll = func() {
		for _, rt := range rts {
			_ = rt.Close()
		}
	}
	if sc != nil && len(sc.Namespaces) > 0 {
		rt := runtime.New()
		rts = append(rts, rt)
		for _, n := range sc.Namespaces {
			ns := rt.Namespace(n.Name, n.Class.New, n.Options()...)
			if namespaces[n.Class.Name] == nil {
				namespaces[n.Class.Name] = ns
			}
		}
	}
	for _, c := range classes {
		if namespaces[c.name] == nil {
			rt := runtime.New()
			rts = append(rts, rt)
			namespaces[c.name] = rt.Namespace(c.name, c.new)
		}
	}
	return namespaces, closeAll
}

// runVerify checks every method, then prints the verdicts' table, the
// calls that failed with their errors, what was not checked, and how twice
// differed from once (rule C6). A marked method that is not idempotent
// exits 1; an inconclusive one leaves the exit code alone (its row says
// so). Nothing is printed when a check cannot run (exit 2).
func runVerify(out io.Writer, classes []verifyClass, namespaces map[string]*runtime.Namespace, checks []verifyCheck, showDiff bool, stall time.Duration) error {
	reports := make([]verify.Report, len(checks))
	for i, ch := range checks {
		rep, err := verify.Idempotent(namespaces[ch.class.name], ch.method, ch.sample.Args, verify.Options{Snapshot: ch.sample.Storage, StallLimit: stall})
		if err != nil {
			return usageErrorf("%w", err)
		}
		reports[i] = rep
	}
	if err := verifyTable(out, checks, reports); err != nil {
		return err
	}
	var sections []string
	if s := failedCalls(checks, reports); s != "" {
		sections = append(sections, s)
	}
	if s := notChecked(classes); s != "" {
		sections = append(sections, s)
	}
	danger := 0
	for i, rep := range reports {
		if rep.Verdict == verify.VerdictDanger {
			danger++
		}
		if rep.Diff == "" || !(showDiff || rep.Verdict == verify.VerdictDanger) {
			continue
		}
		head := "once vs twice"
		if rep.Verdict == verify.VerdictInconclusive {
			head = "inconclusive"
		}
		sections = append(sections, fmt.Sprintf("%s.%s, %s:\n%s", checks[i].class.name, checks[i].method, head, indent(rep.Diff)))
	}
	for _, s := range sections {
		if _, err := fmt.Fprintf(out, "\n%s", s); err != nil {
			return err
		}
	}
	if danger > 0 {
		return &codeError{code: exitExpect}
	}
	return nil
}

// verifyTable prints one row per check.
func verifyTable(out io.Writer, checks []verifyCheck, reports []verify.Report) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tMETHOD\tARGS\tMARKED\tIDEMPOTENT\tVERDICT")
	for i, rep := range reports {
		ch := checks[i]
		args := quote.Cut(render.Value(ch.sample.Args))
		if ch.sample.Args == nil {
			args = "[]"
		}
		idempotent, verdict := yesNo(rep.Idempotent), rep.Verdict
		if rep.Verdict == verify.VerdictInconclusive {
			idempotent, verdict = "?", verdict+": "+rep.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ch.class.name, ch.method, args, yesNo(rep.Marked), idempotent, verdict)
	}
	return tw.Flush()
}

// failedCalls lists, under "failed calls:", each run whose call failed
// and the error its caller got (escaped: it is the object's text); ""
// when none failed.
func failedCalls(checks []verifyCheck, reports []verify.Report) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	n := 0
	for i, rep := range reports {
		for _, run := range []struct {
			name string
			w    verify.World
		}{{"once", rep.Once}, {"twice", rep.Twice}} {
			if run.w.Failed() {
				n++
				fmt.Fprintf(tw, "  %s.%s\t%s\t%s\n", checks[i].class.name, checks[i].method, run.name, render.Escape(run.w.Err))
			}
		}
	}
	if n == 0 {
		return ""
	}
	_ = tw.Flush() // a strings.Builder does not fail
	return "failed calls:\n" + b.String()
}

// notChecked lists what verify does not run twice: fetch handlers, which
// are never marked (rule S6); "" when there is none.
func notChecked(classes []verifyClass) string {
	var b strings.Builder
	for _, c := range classes {
		if c.fetch {
			fmt.Fprintf(&b, "  %s.ServeHTTP  a fetch handler is never marked Retryable, so a retry never runs it twice (rule S6)\n", c.name)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "not checked:\n" + b.String()
}

// indent escapes each line of text and indents it by two spaces.
func indent(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + render.Escape(l)
	}
	return strings.Join(lines, "\n") + "\n"
}
