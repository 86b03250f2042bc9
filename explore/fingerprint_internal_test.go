package explore

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// H2: a summary whose text JSON cannot hold as it is (a violation that
// quotes an object's invalid UTF-8) reads back with the fingerprint it
// was written with: the fingerprint hashes the JSON after a round trip.
func TestH2_FingerprintSurvivesInvalidUTF8(t *testing.T) {
	v := Violation{Seed: 1, Kind: KindError, Object: "NS/\xffobj", Message: "object error: \xff\xfe\x00 bad"}
	s := &Summary{Scenario: "x\xff", First: 1, Seeds: 1, Rates: map[string]float64{"lose-response": 0.1}, MaxAmbiguous: DefaultMaxAmbiguous,
		Shards: []Shard{{Index: 0, Count: 1}}, Complete: true, Ran: 1, Failed: 1, Total: 1, Violations: []Violation{v},
		Fired:        map[string]map[string]int{"M\xff": {"lose-response": 1}},
		FirstFailing: &Failing{Seed: 1, Violations: []Violation{v}, Run: RunSeed}}
	s.seal()
	var b bytes.Buffer
	require.NoError(t, s.WriteJSON(&b))
	back, err := ReadSummary(&b)
	require.NoError(t, err)
	assert.Equal(t, s.Fingerprint, back.Fingerprint)
	m, err := Merge(back)
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, m.WriteJSON(&b))
	_, err = ReadSummary(&b)
	assert.NoError(t, err, "a merged summary reads back too")
}
