package quote_test

import (
	"fmt"
	"strings"

	"github.com/dosim/dosim/internal/quote"
)

func Example() {
	fmt.Println("unknown method " + quote.Q("Sned"))
	fmt.Println("unknown method " + quote.Q(strings.Repeat("M", 500_000)))
	// Output:
	// unknown method "Sned"
	// unknown method "MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM"... (500000 bytes)
}
