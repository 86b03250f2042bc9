package clone_test

import (
	"fmt"

	"github.com/dosim/dosim/internal/clone"
)

// Copy makes the deep copy an argument or a stored value gets (rule O5):
// changing the original afterwards does not reach the copy.
func ExampleCopy() {
	order := map[string][]int{"apples": {1, 2}}
	cp, _, err := clone.Copy(order, nil)
	order["apples"][0] = 99
	fmt.Println(cp, err)
	// Output: map[apples:[1 2]] <nil>
}
