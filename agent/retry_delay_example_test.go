package agent_test

import (
	"fmt"
	"time"

	"github.com/dosim/dosim/agent"
)

// The bound of the wait after each failed attempt of agent.Retry with the
// built-in defaults (rule A2): the wait is uniform in [0, MaxRetryDelay).
func ExampleMaxRetryDelay() {
	base := agent.DefaultBaseDelayMs * time.Millisecond
	maxDelay := agent.DefaultMaxDelayMs * time.Millisecond
	for k := 1; k <= 6; k++ {
		fmt.Printf("after attempt %d: below %v\n", k, agent.MaxRetryDelay(k, base, maxDelay))
	}
	// Output:
	// after attempt 1: below 200ms
	// after attempt 2: below 400ms
	// after attempt 3: below 800ms
	// after attempt 4: below 1.6s
	// after attempt 5: below 3s
	// after attempt 6: below 3s
}
