package transport_test

import (
	"fmt"
	"time"

	"github.com/dosim/dosim/transport"
)

// A plan loses the reply of AddOne's first attempt and delays every Get.
func ExamplePlan() {
	plan := transport.Plan(
		transport.Rule{Method: "AddOne", Attempt: 1, Fault: transport.LoseResponse},
		transport.Rule{Method: "Get", Delay: 3 * time.Second},
	)
	for _, a := range []transport.Attempt{
		{Object: "apple", Method: "AddOne", N: 1},
		{Object: "apple", Method: "AddOne", N: 2},
		{Object: "apple", Method: "Get", N: 1},
	} {
		fault, delay := plan.Decide(a)
		fmt.Printf("%s attempt %d: %s, delay %v\n", a.Method, a.N, fault, delay)
	}
	// Output:
	// AddOne attempt 1: lose-response, delay 0s
	// AddOne attempt 2: none, delay 0s
	// Get attempt 1: none, delay 3s
}

// Each fault says where it strikes, whether the caller can tell, whether
// it is retried, and what the caller reads.
func ExampleFault_Stage() {
	for _, f := range transport.Faults() {
		fmt.Printf("%-19s %-17s ambiguous=%-5t retryable=%t\n", f, f.Stage(), f.Ambiguous(), f.Retryable())
	}
	fmt.Println(transport.LoseResponse.Message())
	// Output:
	// not-delivered       before the object ambiguous=false retryable=true
	// lose-request        before the object ambiguous=true  retryable=true
	// lose-while-running  while running     ambiguous=true  retryable=true
	// lose-response       at the reply      ambiguous=true  retryable=true
	// overloaded          before the object ambiguous=false retryable=false
	// fail-after-delivery at the reply      ambiguous=false retryable=false
	// reset               while running     ambiguous=false retryable=false
	// storage-write-fails nowhere           ambiguous=false retryable=false
	// drop-connection     on a connection   ambiguous=true  retryable=false
	// reply lost (lose-response): the caller cannot tell whether the method ran (it did)
}
