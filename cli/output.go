package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/render"
)

// The output formats of run and demo.
var formats = []string{"text", "json", "mermaid", "html", "chrome-trace"}

// checkFormat says what is wrong with a --format value.
func checkFormat(f string) error {
	if !slices.Contains(formats, f) {
		return usageErrorf("--format: %s is not a format%s; allowed are %s", quote.Q(f), didYouMean(f, formats), strings.Join(formats, ", "))
	}
	return nil
}

// checkColor says what is wrong with a --color value.
func checkColor(c string) error {
	switch c {
	case "auto", "always", "never":
		return nil
	}
	return usageErrorf("--color: %s is not allowed; use auto, always or never", quote.Q(c))
}

// isTerminal reports whether w is a terminal (a character device): the
// check golang.org/x/term would make, without the dependency.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// useColor decides whether text output gets ANSI colours: always, never,
// or (auto) only on a terminal and when NO_COLOR is not set.
func useColor(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return os.Getenv("NO_COLOR") == "" && isTerminal(w)
}

// writeReports renders the reports in format to w.
func writeReports(w io.Writer, format string, color bool, reports []render.Report) error {
	switch format {
	case "json":
		return render.JSON(w, reports...)
	case "html":
		return render.HTML(w, reports...)
	case "chrome-trace":
		return render.ChromeTrace(w, reports...)
	case "mermaid":
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if len(reports) > 1 {
				fmt.Fprintf(w, "%%%% %s\n", r.File)
			}
			if err := render.Mermaid(w, r); err != nil {
				return err
			}
		}
		return nil
	}
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, strings.Repeat("─", 72))
			fmt.Fprintln(w)
		}
		if err := render.Text(w, r, render.TextOptions{Color: color}); err != nil {
			return err
		}
	}
	return nil
}

// usageErrorf is a usage or input error: exit code 2. Its message is
// fmt.Errorf's, and an error given for %w is wrapped (errors.Is, As).
func usageErrorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &codeError{code: exitUsage, msg: err.Error(), named: true, err: err}
}

// example is a command's help examples: builtIn (spelt with "dosim ")
// when dosim's own classes are registered, else generic, with the
// program's name either way.
func (a *app) example(builtIn, generic string) string {
	ex := generic
	if a.hasBuiltIns() {
		ex = builtIn
	}
	return strings.ReplaceAll(ex, "dosim ", a.name+" ")
}
