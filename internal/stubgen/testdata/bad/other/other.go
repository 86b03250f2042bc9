// Package other has a function whose parameter's type it does not export.
package other

import "context"

type secret struct{ N int }

// Put takes a secret, which no other package can name.
func Put(ctx context.Context, s []secret) error { return nil }
