// Package agent is a stub of dosim's agent package.
package agent

import "context"

type RetryOptions struct{}

func Retry(ctx context.Context, fn func(ctx context.Context, attempt int) error, opts RetryOptions) error {
	return fn(ctx, 1)
}
