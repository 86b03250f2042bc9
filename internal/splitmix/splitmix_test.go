package splitmix_test

import (
	"testing"

	"github.com/dosim/dosim/internal/splitmix"
	"github.com/stretchr/testify/assert"
)

// D1: the hash is SplitMix64's, fixed: every seeded draw made from it
// (C5's fault draws among them) stays the same across versions. The
// values are the reference sequence's first outputs from state 0.
func TestD1_HashIsSplitMix64(t *testing.T) {
	assert.Equal(t, uint64(0xe220a8397b1dcdaf), splitmix.Hash(0))
	assert.Equal(t, uint64(0x6e789e6aa1b965f4), splitmix.Hash(0x9e3779b97f4a7c15))
}
