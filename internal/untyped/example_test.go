package untyped_test

import (
	"fmt"

	"github.com/dosim/dosim/internal/untyped"
)

// Map builds the untyped map a fuzz input stands for: here JSON decoded
// with json.Number, and then timeoutMs set to an int8.
func ExampleMap() {
	m := untyped.Map([]byte(`{"maxRetries": 3}`), true, "timeoutMs", 2, 100, 0, "")
	fmt.Printf("%T %v, %T %v\n", m["maxRetries"], m["maxRetries"], m["timeoutMs"], m["timeoutMs"])
	// Output: json.Number 3, int8 100
}
