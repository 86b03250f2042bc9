package explore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
)

// quietT stands in for the *testing.T of a real test.
type quietT struct{ testing.TB }

func (quietT) Helper()                   {}
func (quietT) Name() string              { return "TestWalletUnderFaults" }
func (quietT) Errorf(string, ...any)     {}
func (quietT) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

// Func explores a Go function's fault space: each seed runs it on a fresh
// runtime with random faults and checks the S rules, linearizability
// against the wallet class itself and the function's own error. In a
// test, pass the test's t.
func ExampleFunc() {
	sum := explore.Func(quietT{}, explore.Options{Seeds: 200}, func(ctx context.Context, rt *runtime.Runtime) error {
		s, err := rt.Namespace("WALLET", newWallet).GetByName("alice")
		if err != nil {
			return err
		}
		_, _ = s.Call(ctx, "Deposit", "tx-1", 50) // errors may be expected under faults
		return nil
	})
	fmt.Println("seeds:", sum.Ran, "clean:", sum.Clean())
	// Output: seeds: 200 clean: true
}
