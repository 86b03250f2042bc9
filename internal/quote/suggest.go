package quote

import (
	"slices"
	"strings"
)

// maxSuggest bounds the names Suggest compares: the edit distance costs
// the product of two lengths, and a name this long is no typo.
const maxSuggest = 2 * Max

// Suggest returns the candidate closest to name, quoted, as
// `did you mean "X"?`, or "" when none is close: a name is close when
// its edit distance from name (insertions, deletions, substitutions and
// swaps of two neighbouring characters, case ignored) is at most 1 for
// names up to 5 characters and at most 2 for longer ones, less than half
// the longer of the two (so "C" suggests no "A"), and it is not name
// itself. Two equally close candidates are both named ("p50" or "p99"),
// in the order given; more than two, none.
//
//	Suggest("lose-reponse", faults) // did you mean "lose-response"?
//	Suggest("Bok", methods)         // did you mean "Book"?
func Suggest(name string, candidates []string) string {
	if name == "" || len(name) > maxSuggest {
		return ""
	}
	limit := 1
	if len(name) > 5 {
		limit = 2
	}
	var best []string
	bestD := limit + 1
	for _, c := range candidates {
		if c == name || len(c) > maxSuggest {
			continue
		}
		d := distance(strings.ToLower(name), strings.ToLower(c))
		switch {
		case d > bestD || d > limit || 2*d >= max(len(name), len(c)):
		case d < bestD:
			best, bestD = []string{Q(c)}, d
		case !slices.Contains(best, Q(c)):
			best = append(best, Q(c))
		}
	}
	if len(best) == 0 || len(best) > 2 {
		return ""
	}
	return "did you mean " + strings.Join(best, " or ") + "?"
}

// distance is the optimal-string-alignment edit distance between a and b,
// in bytes.
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
