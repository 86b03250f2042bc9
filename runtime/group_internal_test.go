package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Issue 14: a Group's Prepare is a hint: for a task number it does not
// hold (before base, past fns, a task already run) it does nothing, and it
// never runs or changes a function.
func TestGroupPrepareOnlyHints(t *testing.T) {
	ran := 0
	g := &groupRunner{base: 10, fns: []func(context.Context) error{
		func(context.Context) error { ran++; return nil },
		nil, // already run
	}}
	for _, num := range []uint32{0, 10, 11, 12, 13, 1 << 31} {
		for _, ahead := range []int{1, 2} {
			g.Prepare(num, ahead)
		}
	}
	assert.Zero(t, ran)
	assert.NotNil(t, g.fns[0])
	assert.Nil(t, g.fns[1])
}
