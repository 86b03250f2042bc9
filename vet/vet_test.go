package vet_test

import (
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/dosim/dosim/vet"
)

// Each analyzer on its testdata package: the want comments are the
// reports (and facts) expected, everything else must stay quiet.
func TestAnalyzers(t *testing.T) {
	for _, a := range []*analysis.Analyzer{vet.VirtualTime, vet.Scheduler, vet.MapOrder, vet.BrokenStub, vet.UnsafeMark} {
		t.Run(a.Name, func(t *testing.T) {
			analysistest.Run(t, analysistest.TestData(), a, "example.com/"+a.Name)
		})
	}
}
