package quote

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Rule H2: a message echoes at most Max bytes of an input, and says how
// long it was.
func TestH2_EchoedInputIsBounded(t *testing.T) {
	assert.Equal(t, `"apple"`, Q("apple"))
	assert.Equal(t, "apple", Cut("apple"))
	assert.Equal(t, `"a\x1b[2J"`, Q("a\x1b[2J"))
	exact := strings.Repeat("m", Max)
	assert.Equal(t, `"`+exact+`"`, Q(exact))
	big := strings.Repeat("m", 500_000)
	assert.Equal(t, `"`+exact+`"... (500000 bytes)`, Q(big))
	assert.Equal(t, exact+"... (500000 bytes)", Cut(big))
	// Cut at a character's boundary: no broken UTF-8.
	wide := strings.Repeat("é", 100) // 2 bytes each
	got := Cut(wide)
	assert.Equal(t, strings.Repeat("é", Max/2)+"... (200 bytes)", got)
	odd := "x" + wide
	assert.Equal(t, "x"+strings.Repeat("é", (Max-1)/2)+"... (201 bytes)", Cut(odd))
	assert.Equal(t, "mmm... (500000 bytes)", CutTo(big, 3))
	assert.Equal(t, "mmm", CutTo("mmm", 3))
	long := strings.Repeat("d/", 100)
	assert.Equal(t, `"`+long+`"`, Path(long), "a path keeps up to MaxPath bytes")
	assert.Equal(t, `"`+strings.Repeat("m", MaxPath)+`"... (500000 bytes)`, Path(big))
}

// Suggest names the one close candidate of an unknown name, and nothing
// for a name far from all of them, or for the name itself.
func TestSuggestNamesTheCloseCandidate(t *testing.T) {
	faults := []string{"none", "lose-request", "lose-response", "exception", "overload", "reset"}
	methods := []string{"Book", "Cancel", "Show"}
	for _, c := range []struct {
		name  string
		cands []string
		want  string
	}{
		{"lose-reponse", faults, `did you mean "lose-response"?`},
		{"lose-resposne", faults, `did you mean "lose-response"?`}, // a swap counts once
		{"Bok", methods, `did you mean "Book"?`},
		{"book", methods, `did you mean "Book"?`}, // case is ignored
		{"Booking", methods, ""},                  // 3 away
		{"Xy", methods, ""},
		{"p90", []string{"p50", "p99"}, `did you mean "p50" or "p99"?`},
		{"a1", []string{"a2", "a3", "a4"}, ""}, // three as close: no guess
		{"C", []string{"A", "B"}, ""},          // one letter of one: no likeness
		{"Book", methods, ""},                  // itself: not unknown
		{"", methods, ""},
		{strings.Repeat("B", 500), methods, ""},
	} {
		assert.Equal(t, c.want, Suggest(c.name, c.cands), c.name)
	}
}
