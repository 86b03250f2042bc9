package wallet_test

import (
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/examples/wallet"
)

// FuzzWallet is docs/objects.md's fuzz target: Go's fuzzer chooses the
// faults, latencies and tie-breaks of deposits from its input bytes. Plain
// go test runs its 20 seeds.
func FuzzWallet(f *testing.F) {
	dosimtest.Fuzz(f, dosimtest.Options{Seeds: 20}, deposits(wallet.New)) // deposits: the function above
}
