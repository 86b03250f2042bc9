package examples

import (
	"context"

	"github.com/dosim/dosim/object"
)

// Tally counts votes, and shows what the output gate is for (rule L7).
// Vote writes the count and replies: the runtime holds the reply until the
// write is durable, so when the write fails the caller gets the reset
// error, never a success for a vote that was lost. VoteFast opts out with
// object.AllowUnconfirmed to reply sooner: when its write then fails, the
// caller has already been told the vote counted (the bug).
type Tally struct{ st *object.State }

// NewTally is the Tally constructor for runtime.Namespace.
func NewTally(st *object.State) object.Object { return &Tally{st: st} }

// Methods lists Tally's methods.
func (t *Tally) Methods() object.Methods {
	return object.Methods{
		"Vote":     object.Func(t.Vote),
		"VoteFast": object.Func(t.VoteFast),
		"Votes":    object.Retryable(t.Votes),
	}
}

// Vote counts one vote and returns the count, once the write is durable.
func (t *Tally) Vote(ctx context.Context) (int, error) { return t.vote(ctx) }

// VoteFast counts one vote and replies before the write is durable.
func (t *Tally) VoteFast(ctx context.Context) (int, error) {
	return t.vote(ctx, object.AllowUnconfirmed())
}

func (t *Tally) vote(ctx context.Context, opts ...object.WriteOption) (int, error) {
	var n int
	if _, err := t.st.Storage().Get(ctx, "votes", &n); err != nil {
		return 0, err
	}
	n++
	return n, t.st.Storage().Put(ctx, "votes", n, opts...)
}

// Votes returns the count.
func (t *Tally) Votes(ctx context.Context) (int, error) {
	var n int
	_, err := t.st.Storage().Get(ctx, "votes", &n)
	return n, err
}
