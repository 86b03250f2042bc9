package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An unknown name on the command line (a flag, a format, a fault, a
// class, a method) is answered with the close name it was probably meant
// to be, and exit code 2.
func TestDidYouMeanOnTheCommandLine(t *testing.T) {
	inRoot(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--sed", "3", "testdata/scenarios/overloaded.yaml"}, "dosim: unknown flag: --sed (did you mean --seed?)\n"},
		{[]string{"run", "--stall-limt", "1s", "testdata/scenarios/overloaded.yaml"}, "(did you mean --stall-limit?)"},
		{[]string{"run", "--format", "jsn", "testdata/scenarios/overloaded.yaml"}, `--format: "jsn" is not a format (did you mean "json"?); allowed are`},
		{[]string{"explore", "--rates", "lose-reponse=0.1", "testdata/scenarios/overloaded.yaml"}, `--rates: unknown fault "lose-reponse" (did you mean "lose-response"?)`},
		{[]string{"amplify", "--outer", "2", "--fault", "lose-reponse", "--rate", "0.1"}, `--fault: unknown fault "lose-reponse" (did you mean "lose-response"?)`},
		{[]string{"verify", "inventori"}, `unknown class "inventori" (did you mean "inventory"?)`},
		{[]string{"amplify", "--outer", "2", "--fault", "lose-response", "--rate", "0.1", "--class", "booth", "--method", "Hols"}, `class booth has no method "Hols" (did you mean "Hold"?)`},
	} {
		code, _, errOut := runCLI(t, c.args...)
		assert.Equal(t, exitUsage, code, c.args)
		assert.Contains(t, errOut, c.want, c.args)
	}
}

// go doc cli.WithBuiltInClasses names every built-in class: it listed
// 6 of 10 once, when classes were added and the comment was not.
func TestWithBuiltInClassesDocNamesEveryClass(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "cli", "cli.go"))
	require.NoError(t, err)
	end := strings.Index(string(src), "\nfunc WithBuiltInClasses(")
	require.Positive(t, end)
	start := strings.LastIndex(string(src[:end]), "\n\n")
	doc := strings.Join(strings.Fields(strings.ReplaceAll(string(src[start:end]), "//", "")), " ")
	for _, name := range examples.ClassNames() {
		listed := strings.Contains(doc, " "+name+",") || strings.Contains(doc, " "+name+";")
		assert.True(t, listed, "the doc of WithBuiltInClasses names %s: %s", name, doc)
	}
}

// dosim run --format chrome-trace writes Trace Event JSON: an object of
// traceEvents, a process per file.
func TestRunFormatChromeTrace(t *testing.T) {
	inRoot(t)
	code, out, errOut := runCLI(t, "run", "--format", "chrome-trace", "testdata/scenarios/ambiguous-delivery.yaml", "testdata/scenarios/overloaded.yaml")
	require.Equal(t, exitOK, code, errOut)
	var tr struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &tr))
	var procs []any
	for _, e := range tr.TraceEvents {
		if e.Ph == "M" && e.Name == "process_name" {
			procs = append(procs, e.Args["name"])
		}
	}
	assert.Equal(t, []any{"dosim: ambiguous-delivery (seed 7)", "dosim: overloaded (seed 9)"}, procs)
}
