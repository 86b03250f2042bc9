package stub_test

import (
	"fmt"

	"github.com/dosim/dosim/stub"
)

// The bound of the full-jitter sleep before each retry (rule S8): the stub
// sleeps uniformly in [0, MaxBackoff(n)] before retry n.
func ExampleMaxBackoff() {
	for n := 1; n <= stub.DefaultMaxRetries; n++ {
		fmt.Printf("before retry %d: up to %v\n", n, stub.MaxBackoff(n))
	}
	// Output:
	// before retry 1: up to 500ms
	// before retry 2: up to 1s
	// before retry 3: up to 2s
	// before retry 4: up to 2s
}
