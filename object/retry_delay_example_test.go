package object_test

import (
	"fmt"
	"time"

	"github.com/dosim/dosim/object"
)

// The bound of the wait after each failed attempt of object.Retry with the
// built-in defaults (rule A2): the wait is uniform in [0, MaxRetryDelay).
func ExampleMaxRetryDelay() {
	base := object.DefaultBaseDelayMs * time.Millisecond
	maxDelay := object.DefaultMaxDelayMs * time.Millisecond
	for k := 1; k <= 6; k++ {
		fmt.Printf("after attempt %d: below %v\n", k, object.MaxRetryDelay(k, base, maxDelay))
	}
	// Output:
	// after attempt 1: below 200ms
	// after attempt 2: below 400ms
	// after attempt 3: below 800ms
	// after attempt 4: below 1.6s
	// after attempt 5: below 3s
	// after attempt 6: below 3s
}
