// Command dosimvet finds, at compile time, object code that steps outside
// dosim's simulation: wall-clock time and unseeded randomness, goroutines,
// channels and locks, map order reaching results, broken stubs used again
// (rule L2) and Retryable marks that look unsafe (rules S6, S7). Its
// analyzers and how far they follow calls are described in package
// github.com/dosim/dosim/vet.
//
// Run it through go vet:
//
//	go install github.com/dosim/dosim/cmd/dosimvet
//	go vet -vettool=$(which dosimvet) ./...
//
// or on its own, as dosimvet ./... . A //dosimvet:ok comment with a reason,
// on the reported line or the line above it, silences that one report.
package main

import (
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/dosim/dosim/vet"
)

func main() { multichecker.Main(vet.Analyzers()...) }
