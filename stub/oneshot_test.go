package stub_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S11: a value that goes by reference is marked at its call, in the
// record, whether or not a fault ever shows that the call is one-shot:
// what it is and where. A plain call is not marked.
func TestS11_OneShotValuesAreMarkedAtTheCall(t *testing.T) {
	w := newWorld(t, 3)
	s := w.stub(t)
	require.NoError(t, w.rt.Run(func(ctx context.Context) error {
		for _, args := range [][]any{{7}, {s}, {map[string]any{"in": strings.NewReader("x")}}, {&session{user: "u"}}} {
			if _, err := s.Call(ctx, "Take", args...); err != nil {
				return err
			}
		}
		_, err := s.Call(ctx, "Session", "u")
		return err
	}))
	var got []string
	for _, c := range w.rt.Calls() {
		got = append(got, c.OneShot)
	}
	assert.Equal(t, []string{
		"",
		"argument 1: value is a stub (*stub.Stub)",
		"argument 1: value[in] is a reader (*strings.Reader)",
		"argument 1: value is an RPC target (*stub_test.session)",
		"result: value is a stub (*stub.Stub)",
	}, got)
}
