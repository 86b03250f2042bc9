package scenario_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dosim/dosim/scenario"
)

var errLine = regexp.MustCompile(`^fuzz\.yaml:[1-9][0-9]*: .+: .+`)

// FuzzLoadScenario: no input makes loading panic, every refusal is a list
// of FILE:LINE: field: message errors, and whatever loads also runs.
func FuzzLoadScenario(f *testing.F) {
	files, _ := filepath.Glob("../testdata/scenarios/*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "seed: 1", "- a", "calls: [\n", "a: &a [*a]", "x: !!binary AAAA",
		head + "calls: [{stub: shop, method: AddOne, args: [apple], outer: 2}]\n",
		head + "calls: [{concurrent: [{stub: shop, method: Get, args: [a], at: 1s}]}, {sleep: 1s}]\n",
		head + "faults: {random: {lose-request: 0.5}, rules: [{attempt: 1, fault: overloaded}]}\ncalls: [{stub: shop, method: Get, args: [a]}]\n",
		head + "calls: [{stub: shop, method: AddOne, args: [a], outer: 2, expect: {attempts: {max: 3}, calls: {min: 1, max: 2}, rejected: {min: 0}}}]\n" +
			"expect: {effects: {email: {max: 1}}, resets: {shop: {min: 3, max: 1}}}\nexplore: {expect: {effects: {email: {mx: 1}}}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scenario.Parse("fuzz.yaml", data, builtIns)
		if err != nil {
			var es scenario.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error is not an Errors list: %T %v", err, err)
			}
			for _, e := range es {
				if e.Line < 1 || e.Field == "" || e.Msg == "" || !errLine.MatchString(e.Error()) || strings.Contains(e.Error(), "\n") {
					t.Fatalf("error not in FILE:LINE: field: message form, on one line: %q", e.Error())
				}
			}
			return
		}
		if sc == nil {
			t.Fatal("no error and no scenario")
		}
		if len(sc.Calls()) > 20 {
			return // keep each input fast
		}
		if _, err := sc.Run(); err != nil {
			t.Fatalf("a valid scenario failed to run: %v", err)
		}
	})
}
