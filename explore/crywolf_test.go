package explore_test

import (
	"testing"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/runtime"
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

// TestC10_ASocketKeepsTheNumberItGotWhenAnEarlierAcceptIsLeftOut: a fetch
// that accepted a WebSocket and then lost its writes (storage-write-fails:
// the object is reset, its 101 discarded, the socket dropped) is one the
// model may leave out; the next fetch's socket still got number 2, and
// the dropped socket's close names number 1. The model once numbered
// sockets from its own count, so that leaving the first fetch out gave
// the second socket number 1: the close of the dropped socket then
// closed it in the model, and the correct Presence was reported as not
// linearizable at seed 98 (found by the zoo's orphan-presence fixed
// form). A socket's number is now one of its turn's reads
// (runtime.ReadSocket), as the clock is.
func TestC10_ASocketKeepsTheNumberItGotWhenAnEarlierAcceptIsLeftOut(t *testing.T) {
	b, ok := zoo.Lookup("orphan-presence")
	require.True(t, ok)
	o := explore.Options{First: 98, Seeds: 1, NoShrink: true, NoLatency: true, Strategy: runtime.StrategyRandom}
	sum, err := explore.RunFunc(o, b.Fixed)
	require.NoError(t, err)
	assert.Empty(t, sum.Violations)
	assert.Equal(t, 1, sum.Histories, "the history was checked, not skipped")
	assert.Equal(t, 1, sum.Fired["fetch"]["storage-write-fails"], "the seed still draws the lost writes")
}
