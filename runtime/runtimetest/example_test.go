package runtimetest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime/runtimetest"
	"github.com/dosim/dosim/stub"
)

// exampleT stands in for the *testing.T of a real test: examples have
// none. It runs cleanups at the end, as go test does.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (t *exampleT) Helper()                   {}
func (t *exampleT) Name() string              { return "TestShop" }
func (t *exampleT) Failed() bool              { return false }
func (t *exampleT) Logf(string, ...any)       {}
func (t *exampleT) Errorf(f string, a ...any) { fmt.Printf("FAIL: "+f+"\n", a...) }
func (t *exampleT) Fatalf(f string, a ...any) { fmt.Printf("FATAL: "+f+"\n", a...) }
func (t *exampleT) Cleanup(f func())          { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// New gives a test its runtime (seeded from -dosim.seed or DOSIM_SEED,
// logging through the test, closed and leak-checked when the test ends);
// Run runs the test's root function and fails the test, with the seed, on
// an error. In a test, pass the test's t.
func Example() {
	t := &exampleT{}
	defer t.done()
	rt := runtimetest.New(t)
	ns := rt.Namespace("INVENTORY", examples.NewInventory)
	runtimetest.Run(t, rt, func(ctx context.Context) error {
		s, err := ns.GetByName("shop")
		if err != nil {
			return err
		}
		n, err := stub.CallAs[int](ctx, s, "AddOne", "apple")
		fmt.Println("apples:", n, "seed:", rt.Seed())
		return err
	})
	// Output: apples: 1 seed: 1
}
