package invoke_test

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/internal/invoke"
)

// Compile checks a method's signature once; Args then copies untyped
// arguments into its parameter types (a JSON number into an int) and Call
// runs it.
func ExampleCompile() {
	f, err := invoke.Compile("Add", func(ctx context.Context, a, b int) (int, error) { return a + b, nil })
	if err != nil {
		fmt.Println(err)
		return
	}
	in, err := f.Args(context.Background(), []any{2.0, 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, err := f.Call(in)
	fmt.Println(f.Arity(), sum, err)
	// Output: 2 5 <nil>
}
