package examples

import (
	"context"

	"github.com/dosim/dosim/object"
)

// Counter counts events. Increment is not idempotent (two runs count two),
// so it is left unmarked and never runs twice because of a retry. Get only
// reads and Reset sets a fixed value, so running either twice is harmless:
// both are marked Retryable.
type Counter struct {
	st *object.State
}

// NewCounter is the Counter constructor for runtime.Namespace.
func NewCounter(st *object.State) object.Object { return &Counter{st: st} }

// counterKey is the storage key of the count.
const counterKey = "count"

// Methods lists Counter's methods.
func (c *Counter) Methods() object.Methods {
	return object.Methods{
		"Increment": object.Func(c.Increment),
		"Get":       object.Retryable(c.Get),
		"Reset":     object.Retryable(c.Reset),
	}
}

// Increment adds one to the count and returns the new count.
func (c *Counter) Increment(ctx context.Context) (int, error) {
	n, err := c.Get(ctx)
	if err != nil {
		return 0, err
	}
	n++
	return n, c.st.Storage().Put(ctx, counterKey, n)
}

// Get returns the count (0 before the first Increment).
func (c *Counter) Get(ctx context.Context) (int, error) {
	var n int
	_, err := c.st.Storage().Get(ctx, counterKey, &n)
	return n, err
}

// Reset sets the count back to zero.
func (c *Counter) Reset(ctx context.Context) error {
	return c.st.Storage().Put(ctx, counterKey, 0)
}
