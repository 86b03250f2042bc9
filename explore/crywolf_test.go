package explore_test

import (
	"testing"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestC4_NeverWrittenAndEmptiedAreOneState: an object whose storage was
// never written starts the model's history at no storage, and one whose
// writes were all lost (storage-write-fails on each vote, one of them a
// retry after a lost request) ends at empty storage: the two are one
// state. The check once keyed them apart ("null" and "{}") and reported
// the correct Tally.Vote as not linearizable at seed 693 (a tool that
// cried wolf; found by the zoo's unconfirmed-reply fixed form).
func TestC4_NeverWrittenAndEmptiedAreOneState(t *testing.T) {
	b, ok := zoo.Lookup("unconfirmed-reply")
	require.True(t, ok)
	sum, err := explore.RunFunc(explore.Options{First: 693, Seeds: 1, Rates: b.Rates, NoShrink: true}, b.Fixed)
	require.NoError(t, err)
	assert.Empty(t, sum.Violations)
	assert.Equal(t, 1, sum.Histories, "the history was checked, not skipped")
}
